import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { runSession } from '@/lib/server/engine/runner'
import { execute } from '@/lib/server/operation'
import { checkPxpAnswer } from '@/protocols/pxp/server/operations'
import { createRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import { machineOpens, makeSession, makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * Issue #12: a person's PXP prediction follows the task's rules on the server too (through
 * `sessions.submit`, not only the form); Parley's MATCH is stored beside the person's judgement; and a
 * run can show experts in the machine seat only the proxy tester's tag.
 */
const fake = useFakeLlm()
const TRUTH = { y: 'CCO.CC(=O)O', e: 'Fischer esterification of acetic acid with ethanol.' }

async function sessionAwaitingExpert(task: 'drug' | 'rad') {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  const first =
    task === 'drug'
      ? { prediction: 'CCO', explanation: 'A reduction of the ester.' }
      : { prediction: 'Pneumonia', explanation: 'Consolidation in the right lower lobe.' }
  const s = await makeSession(study.id, {
    protocol: 'pxp',
    config: { n: 10, k: 3 },
    task,
    instance:
      task === 'drug'
        ? { input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e }
        : { input: { image: 'case1.png' }, prediction: 'Atelectasis', explanation: 'Volume loss.' },
    seats: {
      m: {
        kind: 'llm',
        model: { connectionId: conn.id, model: 'gen' },
        helpers: { checker: { connectionId: conn.id, model: 'judge' } },
      },
      h: { kind: 'human', userId: expert.userId },
    },
  })
  await machineOpens(s.id, first)
  await db.protocolSession.update({ where: { id: s.id }, data: { status: 'awaiting', awaitingSeat: 'h' } })
  return { s, expert }
}

const turn = (sessionId: string, prediction: string, explanation = 'my reasons') => ({
  sessionId,
  seq: 2,
  matchPrev: false,
  agreePrev: false,
  prediction,
  explanation,
})
const stored = (sessionId: string) => db.protocolMessage.count({ where: { sessionId } })

describe('a person’s prediction follows the task’s rules on the server', () => {
  it('DRUG: SMILES RDKit cannot parse are refused with a 400 naming them, and nothing is stored', async () => {
    const { s, expert } = await sessionAwaitingExpert('drug')
    const r = await execute(submitTurn, expert, turn(s.id, 'this is not smiles (((('))
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      error: expect.stringContaining('RDKit cannot parse'),
      fieldErrors: { prediction: [expect.stringContaining('RDKit cannot parse')] },
    })
    // One bad component of a reactant list is enough.
    expect(await execute(submitTurn, expert, turn(s.id, 'CCO.C1CC'))).toMatchObject({ ok: false, status: 400 })
    expect(await stored(s.id)).toBe(1)
    // The checker the form calls while typing says the same, and draws valid reactants.
    expect(
      await execute(checkPxpAnswer, expert, { sessionId: s.id, prediction: 'this is not smiles ((((' }),
    ).toMatchObject({
      ok: true,
      data: { valid: false, error: expect.stringContaining('RDKit cannot parse'), svg: null },
    })
    const good = await execute(checkPxpAnswer, expert, { sessionId: s.id, prediction: TRUTH.y })
    expect(good).toMatchObject({ ok: true, data: { valid: true, error: null, match: false } })
    expect(good.ok && good.data.svg).toContain('<svg')
    expect(await execute(submitTurn, expert, turn(s.id, TRUTH.y))).toMatchObject({ ok: true })
  })

  it('RAD: a prediction outside the five labels is refused; a label in another case is stored as the task writes it', async () => {
    const { s, expert } = await sessionAwaitingExpert('rad')
    const r = await execute(submitTurn, expert, turn(s.id, 'Lobar collapse'))
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { prediction: [expect.stringContaining('labels')] },
    })
    expect(await stored(s.id)).toBe(1)
    expect(await execute(submitTurn, expert, turn(s.id, ' pleural  effusion '))).toMatchObject({ ok: true })
    const m = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 2 } } })
    expect(m.value).toBe('Pleural Effusion')
  })

  it('someone without a seat in the session cannot use the checker (404)', async () => {
    const { s } = await sessionAwaitingExpert('drug')
    const other = await makeUser('expert')
    expect(await execute(checkPxpAnswer, other, { sessionId: s.id, prediction: 'CCO' })).toMatchObject({
      ok: false,
      status: 404,
    })
  })
})

describe('Parley’s MATCH beside the person’s judgement', () => {
  it('is stored in the message’s payload; the person’s answer stays the protocol’s input', async () => {
    const { s, expert } = await sessionAwaitingExpert('rad')
    // The expert says "no match" although their label equals the machine's: both are kept.
    const r = await execute(submitTurn, expert, { ...turn(s.id, 'pneumonia'), agreePrev: true })
    expect(r).toMatchObject({ ok: true, data: { message: { tag: 'REFUTE', prediction: 'Pneumonia' } } })
    const m = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: s.id, seq: 2 } } })
    expect(m.payload).toMatchObject({ matchPrev: false, matchComputed: true, derivedTag: 'REFUTE' })
    // The body (what replay reads) has only the protocol's fields.
    expect(Object.keys(m.body as object).sort()).toEqual(['explanation', 'prediction', 'sender', 'seq', 'tag'])
  })
})

describe('the MATCH hint while the expert types', () => {
  it('compares the partner’s latest prediction with the text being sent, at message 4 too; nothing for an empty field', async () => {
    const { s, expert } = await sessionAwaitingExpert('rad')
    // Message 2: the expert said Pneumonia as well; message 3: the machine keeps Pneumonia.
    for (const m of [
      { seq: 2, sender: 'h', receiver: 'm', tag: 'REVISE', prediction: 'Pneumonia', explanation: 'I agree now.' },
      {
        seq: 3,
        sender: 'm',
        receiver: 'h',
        tag: 'REFUTE',
        prediction: 'Pneumonia',
        explanation: 'Still consolidation.',
      },
    ])
      await db.protocolMessage.create({
        data: {
          sessionId: s.id,
          seq: m.seq,
          sender: m.sender,
          receiver: m.receiver,
          label: m.tag,
          value: m.prediction,
          detail: m.explanation,
          body: { seq: m.seq, sender: m.sender, tag: m.tag, prediction: m.prediction, explanation: m.explanation },
        },
      })
    const check = async (prediction: string) => {
      const r = await execute(checkPxpAnswer, expert, { sessionId: s.id, prediction })
      if (!r.ok) throw new Error(r.error)
      return r.data
    }
    // An empty field: no verdict (Procedure 2's MATCH of messages 3 and 2 would say "matches").
    expect(await check('')).toMatchObject({ j: 4, match: null })
    // The text on screen decides: Atelectasis does not match the machine's Pneumonia.
    expect(await check('Atelectasis')).toMatchObject({ j: 4, valid: true, match: false })
    expect(await check('pneumonia')).toMatchObject({ j: 4, valid: true, match: true })
    // Not a label of the task: no verdict about it.
    expect(await check('Lobar collapse')).toMatchObject({ j: 4, valid: false, match: null })
  })
})

describe('experts in the machine seat against the ground-truth proxy', () => {
  async function run(proxyAnswer?: 'tag-only') {
    const researcher = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(researcher, [expert])
    const conn = await fakeConnection(study.id, fake())
    fake().setScript([{ match: { model: 'judge' }, replies: [{ text: 'No' }] }])
    const ds = await db.dataset.create({
      data: {
        studyId: study.id,
        name: 'one ester',
        kind: 'drug',
        source: 'inline',
        instances: { create: { index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e } },
      },
    })
    const created = await execute(createRun, researcher, {
      protocol: 'pxp',
      studyId: study.id,
      name: 'expert as machine vs proxy',
      datasetId: ds.id,
      machine: 'expert',
      tester: 'proxy',
      expertIds: [expert.userId],
      generator: { connectionId: conn.id, model: 'gen' },
      checker: { connectionId: conn.id, model: 'judge' },
      ...(proxyAnswer ? { proxyAnswer } : {}),
    })
    if (!created.ok) throw new Error(created.error)
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: created.data.id } })
    expect(await runSession(s.id)).toEqual({ kind: 'awaiting', seat: 'm' })
    await execute(submitTurn, expert, { sessionId: s.id, seq: 1, prediction: 'CCO', explanation: 'A reduction.' })
    expect(await runSession(s.id)).toEqual({ kind: 'awaiting', seat: 'm' })
    const view = await execute(getSession, expert, { sessionId: s.id })
    const asResearcher = await execute(getSession, researcher, { sessionId: s.id })
    const experiment = await db.run.findUniqueOrThrow({ where: { id: created.data.id } })
    return {
      view,
      asResearcher,
      experiment,
      session: await db.protocolSession.findUniqueOrThrow({ where: { id: s.id } }),
    }
  }

  it('by default the proxy’s REFUTE shows the expert the reference answer (as the form warns)', async () => {
    const { view, session } = await run()
    expect(JSON.stringify(view)).toContain(TRUTH.e)
    expect(session.config).toMatchObject({ proxyAnswer: 'shown' })
  })

  it('with proxyAnswer = tag-only the expert sees the tag but not the answer; researchers see all; the run records it', async () => {
    const { view, asResearcher, experiment, session } = await run('tag-only')
    expect(view.ok).toBe(true)
    expect(JSON.stringify(view)).not.toContain(TRUTH.e)
    expect(JSON.stringify(view)).not.toContain(TRUTH.y)
    expect(view.ok && view.data.messages[1]?.body).toMatchObject({ seq: 2, sender: 'h', tag: 'REFUTE' })
    expect(view.ok && view.data.view).toMatchObject({ hiddenSeats: ['h'] })
    expect(JSON.stringify(asResearcher)).toContain(TRUTH.e)
    expect(experiment.config).toMatchObject({ proxyAnswer: 'tag-only' })
    expect(session.config).toMatchObject({ proxyAnswer: 'tag-only' })
    // MATCH hints would tell the reference answer bit by bit: none while the tester's answer is hidden.
  })
})
