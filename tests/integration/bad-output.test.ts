import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { runSession } from '@/lib/server/engine/runner'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import type { EvinceRunView } from '@/protocols/evince/server/plugin'
import { exportRun } from '@/lib/server/services/run-export'
import { createRun, retrySession, viewRun } from '@/lib/server/services/runs'
import { getSession } from '@/lib/server/services/sessions'
import { debateRules, loadDebateFixture } from '../../protocols/evince/tests/support'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { tripInstance } from '../../protocols/scorekeeping/tests/support'

/**
 * Bad model output never becomes data: a reply that breaks a protocol's rules is re-asked (bounded),
 * then the session stalls with the reason and nothing appended, and Retry finishes it once the model
 * answers well. Stored logs written before a rule existed are left out of the results, by name.
 */
const fake = useFakeLlm()
afterAll(async () => {
  await stopBoss()
})

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await fakeConnection(study.id, fake())
  return { researcher, study, conn }
}

async function create(actor: Actor, protocol: string, input: Record<string, unknown>) {
  const r = await execute(createRun, actor, { protocol, start: false, ...input })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  return r.data
}

/** The session's call log: every attempt, in order. */
const calls = (sessionId: string, purpose: string) =>
  db.llmCall.findMany({ where: { sessionRef: sessionId, purpose }, orderBy: { createdAt: 'asc' } })

const messages = (sessionId: string) => db.protocolMessage.count({ where: { sessionId } })

/** What the generic demo model answers a debater it has no rules for: one placeholder label at 200 %. */
const PLACEHOLDER = {
  predictions: [{ label: 'simulated label', probability: 2, justification: 'simulated justification' }],
  arguments: ['simulated arguments'],
  counterArguments: ['simulated counterArguments'],
}
const GOOD = (label: string) => ({
  predictions: [
    { label, probability: 0.7, justification: 'fits' },
    { label: 'Influenza', probability: 0.3, justification: 'possible' },
  ],
  arguments: [`${label} explains the fever`],
  counterArguments: [],
})

describe('EVINCE: a distribution that breaks the rules is re-asked, never stored', () => {
  it('the issue: a one-label reply at 200 % (then a sum of 0) is re-asked, the debate stalls with nothing appended, Retry finishes it', async () => {
    const w = await world()
    fake().setScript([
      {
        match: { model: 'gen-a' },
        replies: [{ json: { ...PLACEHOLDER, predictions: [{ label: 'Flu', probability: 0 }] } }, { json: PLACEHOLDER }],
      },
      { match: { model: 'gen-b' }, replies: [{ json: GOOD('Dengue Fever') }] },
    ])
    const run = await create(w.researcher, 'evince', {
      studyId: w.study.id,
      name: 'bad debater',
      A: { kind: 'llm', connectionId: w.conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: w.conn.id, model: 'gen-b' },
      config: { k: 3, maxRounds: 1 },
      case: { symptoms: 'fever, rash, pain behind the eyes', truth: 'Dengue Fever' },
    })
    const sid = run.firstSessionId as string
    const end = await runSession(sid)
    expect(end).toMatchObject({ kind: 'stalled', error: expect.stringMatching(/sum to 200 %/) })
    expect(await messages(sid)).toBe(0)
    // Three asks (two re-asks), each naming what was wrong; every attempt logged as failed.
    const asked = fake().requests.filter((q) => q.model === 'gen-a' && JSON.stringify(q.body).includes('pain behind'))
    expect(asked).toHaveLength(3)
    expect(JSON.stringify(asked[1]?.body)).toContain('Your answer cannot be used: the probabilities sum to 0 %')
    expect(JSON.stringify(asked[2]?.body)).toContain('the probabilities sum to 200 %')
    const log = await calls(sid, 'evince-debate')
    expect(log.map((c) => c.errorKind)).toEqual(['invalid_output', 'invalid_output', 'invalid_output'])
    expect(await db.protocolSession.findUniqueOrThrow({ where: { id: sid } })).toMatchObject({
      status: 'stalled',
      stallError: expect.stringMatching(/invalid_output: No valid reply after 3 asks: .*sum to 200 %/),
    })
    // The model is fixed; Retry resumes the debate from the message it could not write.
    fake().setScript([
      { match: { model: 'gen-a' }, replies: [{ json: GOOD('Dengue Fever') }] },
      { match: { model: 'gen-b' }, replies: [{ json: GOOD('Dengue Fever') }] },
    ])
    expect(await execute(retrySession, w.researcher, { sessionId: sid })).toMatchObject({ ok: true })
    expect(await runSession(sid)).toMatchObject({ kind: 'done' })
    const stored = await db.protocolMessage.findMany({ where: { sessionId: sid }, orderBy: { seq: 'asc' } })
    expect(stored.map((m) => (m.body as { predictions: unknown[] }).predictions)).toEqual([
      GOOD('Dengue Fever').predictions,
      GOOD('Dengue Fever').predictions,
    ])
  })

  it('a list longer than k whose probabilities sum to 1 is cut to the top k and rescaled (with a warning); in percent it is read as fractions', async () => {
    const w = await world()
    fake().setScript([
      {
        match: { model: 'gen-a' },
        replies: [
          {
            json: {
              predictions: [
                { label: 'Flu', probability: 0.5 },
                { label: 'Cold', probability: 0.3 },
                { label: 'Covid', probability: 0.2 },
              ],
            },
          },
        ],
      },
      {
        match: { model: 'gen-b' },
        replies: [
          {
            json: {
              predictions: [
                { label: 'Flu', probability: 60 },
                { label: 'Cold', probability: 40 },
              ],
            },
          },
        ],
      },
    ])
    const run = await create(w.researcher, 'evince', {
      studyId: w.study.id,
      name: 'repairs',
      A: { kind: 'llm', connectionId: w.conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: w.conn.id, model: 'gen-b' },
      config: { k: 2, maxRounds: 1 },
      case: { symptoms: 'fever, cough' },
    })
    const sid = run.firstSessionId as string
    expect(await runSession(sid)).toMatchObject({ kind: 'done' })
    const [a, b] = await db.protocolMessage.findMany({ where: { sessionId: sid }, orderBy: { seq: 'asc' } })
    const probs = (m: typeof a) =>
      (
        (m?.body ?? { predictions: [] }) as { predictions: Array<{ label: string; probability: number }> }
      ).predictions.map((p) => [p.label, Number(p.probability.toFixed(6))])
    expect(probs(a)).toEqual([
      ['Flu', 0.625],
      ['Cold', 0.375],
    ])
    expect(probs(b)).toEqual([
      ['Flu', 0.6],
      ['Cold', 0.4],
    ])
    const c = await db.contextSnapshot.findMany({ where: { sessionId: sid }, orderBy: { seq: 'asc' } })
    expect((c[0]?.context as { warnings?: string[] } | undefined)?.warnings).toEqual([
      'listed 3 labels; kept the top 2 (80 % of the probability) and rescaled them to 100 %',
    ])
    expect((c[1]?.context as { warnings?: string[] } | undefined)?.warnings).toEqual([
      'probabilities given in percent; read as fractions',
    ])
    // Both replies were used as they came: no re-ask.
    expect(fake().requests.filter((q) => JSON.stringify(q.body).includes('fever, cough'))).toHaveLength(2)
  })

  it('a stored debate whose log the rules now refuse is left out of accuracy, intervals, confusion and finals, and named', async () => {
    const w = await world()
    const dengue = loadDebateFixture('dengue')
    const jaundice = loadDebateFixture('jaundice')
    const ds = await db.dataset.create({
      data: {
        studyId: w.study.id,
        name: 'cases',
        kind: 'cases',
        source: 'test',
        instances: {
          create: [dengue, jaundice].map((f, index) => ({
            index,
            input: { symptoms: f.symptoms },
            prediction: f.groundTruth,
            explanation: '',
          })),
        },
      },
    })
    fake().setScript([...debateRules(dengue), ...debateRules(jaundice)])
    const run = await create(w.researcher, 'evince', {
      studyId: w.study.id,
      name: 'old data',
      A: { kind: 'llm', connectionId: w.conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: w.conn.id, model: 'gen-b' },
      judge: { connectionId: w.conn.id, model: 'judge' },
      config: { k: 5, maxRounds: 3 },
      datasetId: ds.id,
    })
    const sessions = await db.protocolSession.findMany({
      where: { runId: run.id },
      orderBy: { position: 'asc' },
    })
    for (const s of sessions) expect(await runSession(s.id)).toMatchObject({ kind: 'done' })
    // The Dengue debate as an older Parley stored it: A's round 1 was one placeholder label at 200 %.
    const dengueSession = sessions[0]?.id as string
    const first = await db.protocolMessage.findFirstOrThrow({ where: { sessionId: dengueSession, seq: 1 } })
    await db.protocolMessage.update({
      where: { id: first.id },
      data: {
        body: { ...(first.body as object), predictions: [{ label: 'simulated label', probability: 2 }] },
        value: 'simulated label',
      },
    })
    await db.protocolSession.update({ where: { id: dengueSession }, data: { updatedAt: new Date() } })

    const v = await execute(viewRun, w.researcher, { runId: run.id })
    if (!v.ok) throw new Error(v.error)
    const view = v.data.data as EvinceRunView
    // Only Jaundice is scored ("Obstructive Jaundice" is not "Jaundice": top-1 0 of 1).
    expect(view.accuracy).toMatchObject({ n: 1, excluded: 1 })
    for (const row of view.accuracy.rows) expect(row).toMatchObject({ n: 1 })
    expect(view.confusion.truths).toEqual(['jaundice'])
    expect(view.confusion.predicted).not.toContain('simulated label')
    expect(view.excluded).toEqual({
      count: 1,
      cases: [
        {
          sessionId: dengueSession,
          position: 0,
          reason: expect.stringMatching(/^Message 1 \(A\): the probabilities sum to 200 %/),
        },
      ],
    })
    const dengueCase = view.cases.items.find((c) => c.sessionId === dengueSession)
    expect(dengueCase).toMatchObject({ final: null, aloneA: null, excluded: expect.stringMatching(/200 %/) })

    const r = await execute(exportRun, w.researcher, { runId: run.id, table: 'finals', format: 'jsonl' })
    if (!r.ok) throw new Error(r.error)
    const finals: Array<Record<string, unknown>> = []
    for await (const l of r.data.lines()) finals.push(JSON.parse(l))
    const row = finals.find((f) => f.session === dengueSession)
    expect(row).toMatchObject({ final: null, top1: null, top1Correct: null, excluded: expect.stringMatching(/200 %/) })
    expect(finals.find((f) => f.session !== dengueSession)).toMatchObject({ excluded: null })
    // The rounds export stops where the log breaks the rules: nothing of the Dengue debate is charted.
    const rounds = await execute(exportRun, w.researcher, { runId: run.id, table: 'rounds', format: 'jsonl' })
    if (!rounds.ok) throw new Error(rounds.error)
    const rows: Array<Record<string, unknown>> = []
    for await (const l of rounds.data.lines()) rows.push(JSON.parse(l))
    expect(rows.filter((x) => x.session === dengueSession)).toEqual([])
    expect(rows.filter((x) => x.session !== dengueSession)).toHaveLength(3)
    // Its session page cannot replay it: a 409 that names the message, not a 500 saying "try again".
    expect(await execute(getSession, w.researcher, { sessionId: dengueSession })).toMatchObject({
      ok: false,
      status: 409,
      error: expect.stringMatching(
        /^This session's log breaks the protocol's rules as they are now: Message 1 \(A\): the probabilities sum to 200 %.*the inspector shows every message\.$/,
      ),
    })
  })
})

describe('PXP: an answer that shows nothing is re-asked, never stored', () => {
  it('a prediction of only invisible characters is re-asked, the session stalls with nothing appended, Retry finishes it', async () => {
    const w = await world()
    const ds = await db.dataset.create({
      data: {
        studyId: w.study.id,
        name: 'drug',
        kind: 'drug',
        source: 'inline',
        instances: {
          create: [{ index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'Ester.' }],
        },
      },
    })
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: \u200b\u200b\nPathway: An esterification.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'No' }] },
    ])
    const run = await create(w.researcher, 'pxp', {
      studyId: w.study.id,
      name: 'invisible',
      datasetId: ds.id,
      n: 4,
      k: 2,
      carryOver: false,
      generator: { connectionId: w.conn.id, model: 'gen' },
      checker: { connectionId: w.conn.id, model: 'judge' },
    })
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: run.id } })
    expect(await runSession(s.id)).toMatchObject({
      kind: 'stalled',
      error: expect.stringMatching(/The prediction is empty: it shows no character/),
    })
    expect(await messages(s.id)).toBe(0)
    expect(
      fake().requests.filter((q) => q.model === 'gen' && JSON.stringify(q.body).includes('CCOC(C)=O')),
    ).toHaveLength(3)
    expect((await calls(s.id, 'pxp-generate')).map((c) => c.errorKind)).toEqual([
      'invalid_output',
      'invalid_output',
      'invalid_output',
    ])
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: CCO.CC(=O)O\nPathway: Ester.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ])
    expect(await execute(retrySession, w.researcher, { sessionId: s.id })).toMatchObject({ ok: true })
    expect(await runSession(s.id)).toEqual({ kind: 'done', reason: 'mutual-ratify' })
    const stored = await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })
    expect(stored.map((m) => [m.label, m.value])).toEqual([
      ['INIT', 'CCO.CC(=O)O'],
      ['RATIFY', 'CCO.CC(=O)O'],
      ['RATIFY', 'CCO.CC(=O)O'],
    ])
  })
})

describe('scorekeeping: a game move is recorded, a reply that is no protocol message stalls', () => {
  async function game(w: Awaited<ReturnType<typeof world>>) {
    const ds = await db.dataset.create({
      data: {
        studyId: w.study.id,
        name: 'trip',
        kind: 'clembench',
        source: 'test',
        instances: {
          create: [{ index: 0, input: tripInstance() as object, prediction: '', explanation: '', meta: {} }],
        },
      },
    })
    const run = await create(w.researcher, 'scorekeeping', {
      studyId: w.study.id,
      name: 'answerer',
      datasetId: ds.id,
      answerer: { kind: 'llm', connectionId: w.conn.id, model: 'gen' },
    })
    return db.protocolSession.findFirstOrThrow({ where: { runId: run.id } })
  }

  it("a malformed answer is clembench's abort, recorded as the game's last message: not re-asked, not stalled", async () => {
    const w = await world()
    fake().setScript([
      { match: { model: 'gen', contains: 'Answer this question with yes or no' }, replies: [{ text: 'ASIDE: No.' }] },
      { match: { model: 'gen' }, replies: [{ text: 'simulated answer\nwith a second line' }] },
    ])
    const s = await game(w)
    expect(await runSession(s.id)).toEqual({ kind: 'done', reason: 'aborted-answer' })
    const last = await db.protocolMessage.findFirstOrThrow({ where: { sessionId: s.id }, orderBy: { seq: 'desc' } })
    expect(last.body).toMatchObject({ kind: 'answer', text: 'simulated answer\nwith a second line' })
    expect(fake().requests.filter((q) => JSON.stringify(q.body).includes('Tell me to?'))).toHaveLength(1)
  })

  it('a reply too long to be a protocol message stalls the game with nothing appended; Retry finishes it', async () => {
    const w = await world()
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: `ASIDE: No. ${'x'.repeat(100_001)}` }] }])
    const s = await game(w)
    expect(await runSession(s.id)).toMatchObject({ kind: 'stalled', error: expect.stringMatching(/^invalid-message/) })
    expect(await messages(s.id)).toBe(1) // the game master's first probe; the reply is not stored
    fake().setScript([
      { match: { model: 'gen', contains: 'Answer this question with yes or no' }, replies: [{ text: 'ASIDE: No.' }] },
      { match: { model: 'gen' }, replies: [{ text: 'ANSWER: Rome' }] },
    ])
    expect(await execute(retrySession, w.researcher, { sessionId: s.id })).toMatchObject({ ok: true })
    expect(await runSession(s.id)).toMatchObject({ kind: 'done' })
  })
})
