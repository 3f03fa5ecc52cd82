import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { fnv1a } from '@/lib/llm/text'
import { db, sql } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { submitTurn } from '@/lib/server/services/sessions'
import { buildCorpus, NO_PAGE_OPEN, parsePagesJsonl } from '@/protocols/rehac/core/qa-env'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import { rehacQaDataset, rehacScript } from '@/protocols/rehac/fixture'
import { sqlSlug } from '@/protocols/rehac/server/agents'
import { PREVIEWS_PER_MINUTE, previewRehacStep, suggestRehacStep } from '@/protocols/rehac/server/operations'
import { endSqlReaders, sqlNames } from '@/protocols/rehac/server/sql-env'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { importAndWait, useBulkWorkers } from '../../../tests/support/imports'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * The annotator's helpers (issue 24): "Run" previews the Observation without writing anything, "Show a
 * suggestion" asks the session's agent on demand; only the person in the human seat, while their step is due.
 */
const fake = useFakeLlm()
useBulkWorkers()
afterAll(() => endSqlReaders())

const demoText = (name: string) => readFileSync(path.join(import.meta.dirname, '../demo', name), 'utf8')
const demoFile = (name: string) => new File([demoText(name)], name)
const corpus = buildCorpus(parsePagesJsonl(demoText('corpus.jsonl')))

async function world() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, expert, studyId: study.id, connectionId: conn.id }
}
type World = Awaited<ReturnType<typeof world>>

/** A human-only episode whose first step waits for the expert: the session and the message due. */
async function awaitingStep(w: World, datasetId: string) {
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'rehac',
    name: 'annotator',
    datasetId,
    sample: 1,
    seats: {
      decider: { kind: 'program', program: 'human-only' },
      agent: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } },
      human: { kind: 'human', userId: w.expert.userId },
    },
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  expect(await runHeadless(r.data.id)).toMatchObject({ awaiting: 1 })
  const s = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  return { sessionId: s.id, seq: 2 }
}

/** What a preview or a suggestion must leave as it was: the log, the session row, the drafts. */
async function snapshot(sessionId: string) {
  const [messages, session] = await Promise.all([
    db.protocolMessage.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } }),
    db.protocolSession.findUniqueOrThrow({ where: { id: sessionId } }),
  ])
  return { messages, session }
}

describe('Run: the Observation of a proposed action, before the step is sent', () => {
  it('QA: Search answers from the corpus, Lookup without a page says so, Finish never tells the gold; nothing written', async () => {
    const w = await world()
    const { sessionId, seq } = await awaitingStep(w, await rehacQaDataset(w.studyId, 1))
    const before = await snapshot(sessionId)
    const preview = (type: string, arg: string) =>
      execute(previewRehacStep, w.expert, { sessionId, seq, action: { type, arg } })
    expect(await preview('search', 'Calder Lighthouse')).toMatchObject({
      ok: true,
      data: { j: 2, observation: corpus.pages.get('calder lighthouse')?.paragraphs[0], ends: false, ok: true },
    })
    expect(await preview('lookup', 'designed')).toMatchObject({ ok: true, data: { observation: NO_PAGE_OPEN } })
    const fin = await preview('finish', 'Someone Else')
    expect(fin).toMatchObject({ ok: true, data: { ends: true, ok: true } })
    // Neither the gold answer nor a reward: the preview of a wrong answer reads as that of a right one.
    expect(JSON.stringify(fin)).not.toMatch(/Halvard Brenn|reward = /)
    // The protocol's own rules, on their fields, as sending has them.
    expect(await preview('sql', 'SELECT 1')).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { 'action.type': expect.any(Array) },
    })
    expect(await preview('search', '  ')).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { 'action.arg': expect.any(Array) },
    })
    expect(await snapshot(sessionId)).toEqual(before)
    // The step sent afterwards gets the very Observation the preview showed.
    const sent = await execute(submitTurn, w.expert, {
      sessionId,
      seq,
      thought: 'The lighthouse first.',
      action: { type: 'search', arg: 'Calder Lighthouse' },
    })
    expect(sent.ok).toBe(true)
    await runHeadless(before.session.runId as string)
    const log = (await snapshot(sessionId)).messages.map((m) => m.body as unknown as RehacMessage)
    expect(log[2]).toMatchObject({ kind: 'observation', text: corpus.pages.get('calder lighthouse')?.paragraphs[0] })
    // A Lookup after the Search reads the open page (the corpus state is the log's).
    const next = await execute(previewRehacStep, w.expert, {
      sessionId,
      seq: 5,
      action: { type: 'lookup', arg: 'designed' },
    })
    expect(next.ok && next.data.observation).not.toBe(NO_PAGE_OPEN)
  })

  it('refuses whoever is not in the human seat, a person removed from the study, and a step no longer due', async () => {
    const w = await world()
    const { sessionId, seq } = await awaitingStep(w, await rehacQaDataset(w.studyId, 1))
    const action = { type: 'search', arg: 'Calder Lighthouse' }
    // The study's researcher sees the session but does not sit in it.
    expect(await execute(previewRehacStep, w.researcher, { sessionId, seq, action })).toMatchObject({ status: 404 })
    expect(await execute(suggestRehacStep, w.researcher, { sessionId, seq })).toMatchObject({ status: 404 })
    // Someone of another study.
    const stranger = await makeUser('expert')
    await makeStudy(stranger, [])
    expect(await execute(previewRehacStep, stranger, { sessionId, seq, action })).toMatchObject({ status: 404 })
    expect(await execute(previewRehacStep, w.expert, { sessionId, seq: seq + 1, action })).toMatchObject({
      status: 409,
    })
    // Rate-limited per person: past the minute's previews, 429; nothing else is affected.
    for (let i = 0; i < PREVIEWS_PER_MINUTE; i++)
      expect((await execute(previewRehacStep, w.expert, { sessionId, seq, action })).ok).toBe(true)
    expect(await execute(previewRehacStep, w.expert, { sessionId, seq, action })).toMatchObject({ status: 429 })
    // Seated, but no longer a member of the session's study.
    await db.studyMember.deleteMany({ where: { studyId: w.studyId, userId: w.expert.userId } })
    expect(await execute(previewRehacStep, w.expert, { sessionId, seq, action })).toMatchObject({ status: 404 })
    expect(await execute(suggestRehacStep, w.expert, { sessionId, seq })).toMatchObject({ status: 404 })
  })

  it('SQL: a SELECT shows its rows; DROP TABLE is refused with the database error and changes nothing', async () => {
    const w = await world()
    const imported = await importAndWait(w.researcher, {
      studyId: w.studyId,
      kind: 'rehac-sql',
      name: 'shop',
      file: demoFile('sql-tasks.jsonl'),
      schema: demoFile('shop.sql'),
    })
    if (!imported.ok) throw new Error(imported.error)
    const { sessionId, seq } = await awaitingStep(w, imported.data.id)
    const schema = sqlNames(sqlSlug(demoText('shop.sql'), fnv1a)).schema
    const preview = (type: string, arg: string) =>
      execute(previewRehacStep, w.expert, { sessionId, seq, action: { type, arg } })
    const select = await preview('sql', "SELECT title FROM book WHERE genre = 'mystery'")
    expect(select).toMatchObject({
      ok: true,
      data: { ok: true, ends: false, observation: expect.stringMatching(/^\[\('/) },
    })
    const books = async () => (await sql().query(`SELECT count(*)::int AS n FROM ${schema}.book`)).rows[0]?.n as number
    const n = await books()
    expect(n).toBeGreaterThan(0)
    const before = await snapshot(sessionId)
    const drop = await preview('sql', 'DROP TABLE book')
    expect(drop).toMatchObject({ ok: true, data: { ok: false, ends: false } })
    expect(drop.ok && drop.data.observation).toMatch(/read-only|permission denied|must be owner/i)
    expect(await books()).toBe(n)
    const submit = await preview('submit', '')
    expect(submit).toMatchObject({ ok: true, data: { ends: true } })
    expect(JSON.stringify(submit)).not.toMatch(/reward = /)
    expect(await snapshot(sessionId)).toEqual(before)
    // Sent, the statement gets the Observation its preview showed.
    const statement = "SELECT title FROM book WHERE genre = 'mystery'"
    expect((await execute(submitTurn, w.expert, { sessionId, seq, action: { type: 'sql', arg: statement } })).ok).toBe(
      true,
    )
    await runHeadless(before.session.runId as string)
    const observed = await db.protocolMessage.findFirstOrThrow({ where: { sessionId, seq: seq + 1 } })
    expect(observed.body).toMatchObject({ kind: 'observation', text: select.ok ? select.data.observation : '' })
  })
})

describe('Show a suggestion: the agent’s proposal for this step, on demand', () => {
  it('asks the agent’s model with its ReAct prompt and stop; logs the call, writes no message; the step records the copy', async () => {
    const w = await world()
    const { sessionId, seq } = await awaitingStep(w, await rehacQaDataset(w.studyId, 1))
    fake().setScript(rehacScript(0) as FakeRule[])
    fake().reset()
    const before = await snapshot(sessionId)
    const got = await execute(suggestRehacStep, w.expert, { sessionId, seq })
    expect(got).toMatchObject({
      ok: true,
      data: { j: 2, thought: 'I need the lighthouse first.', action: { type: 'search', arg: 'Calder Lighthouse' } },
    })
    const sent = fake()
      .requests.filter((r) => r.path.endsWith('/chat/completions'))
      .map((r) => r.body as { temperature?: number; max_tokens?: number; stop?: string[]; messages: unknown[] })
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatchObject({ temperature: 0, max_tokens: 100, stop: ['\nObservation 1:'] })
    // The agent's own prompt (no simulated-annotator system line) and no gold answer in it.
    expect(sent[0]?.messages).toHaveLength(1)
    expect(JSON.stringify(sent[0])).not.toContain('Halvard Brenn')
    const calls = await db.llmCall.findMany({ where: { studyId: w.studyId, purpose: 'rehac-suggestion' } })
    expect(calls.map((c) => [c.sessionRef, c.messageRef])).toEqual([[sessionId, '2']])
    expect(await snapshot(sessionId)).toEqual(before)
    const ok = await execute(submitTurn, w.expert, {
      sessionId,
      seq,
      thought: 'I need the lighthouse first.',
      action: { type: 'search', arg: 'Calder Lighthouse' },
      suggestion: 'copied',
    })
    expect(ok.ok).toBe(true)
    const step = await db.protocolMessage.findFirstOrThrow({ where: { sessionId, seq } })
    expect(step.body).toMatchObject({ sender: 'human', suggestion: 'copied' })
  })

  it('a reply that is not a step comes back as text with no action; a failing model is a clear error', async () => {
    const w = await world()
    const { sessionId, seq } = await awaitingStep(w, await rehacQaDataset(w.studyId, 1))
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: 'I would look it up <b>now</b>.' }] }])
    expect(await execute(suggestRehacStep, w.expert, { sessionId, seq })).toMatchObject({
      ok: true,
      data: { action: null, raw: 'I would look it up <b>now</b>.' },
    })
    fake().setScript([{ match: { model: 'gen' }, replies: [{ fault: '500' }] }])
    const failed = await execute(suggestRehacStep, w.expert, { sessionId, seq })
    expect(failed).toMatchObject({
      ok: false,
      status: 422,
      error: expect.stringMatching(/could not make a suggestion/),
    })
  })
})
