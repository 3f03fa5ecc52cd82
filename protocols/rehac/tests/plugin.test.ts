import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun, viewRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import { rehacQaDataset, rehacScript } from '@/protocols/rehac/fixture'
import { buildCorpus, parsePagesJsonl } from '@/protocols/rehac/core/qa-env'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import type { RehacRunView, RehacSessionView } from '@/protocols/rehac/server/views'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

const corpus = buildCorpus(
  parsePagesJsonl(readFileSync(path.join(import.meta.dirname, '../demo/corpus.jsonl'), 'utf8')),
)

async function world() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  // The first demo question: "Who designed the lighthouse …" (gold: Halvard Brenn).
  const datasetId = await rehacQaDataset(study.id, 1)
  return { researcher, expert, studyId: study.id, connectionId: conn.id, datasetId }
}
type World = Awaited<ReturnType<typeof world>>

const llm = (w: World) => ({ kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } })

async function run(w: World, seats: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'rehac',
    name: 'rehac test',
    datasetId: w.datasetId,
    seats,
    ...extra,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const session = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  return { runId: r.data.id, sessionId: session.id }
}

const bodies = (sessionId: string) =>
  db.protocolMessage
    .findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
    .then((ms) => ms.map((m) => m.body as unknown as RehacMessage))

describe('ReHAC on the engine', () => {
  it('an agent-only episode on the fake LLM plays to done: ReAct decoding, real observations, T stored', async () => {
    const w = await world()
    fake().setScript(rehacScript(0) as FakeRule[])
    fake().reset()
    const { runId, sessionId } = await run(w, {
      decider: { kind: 'program', program: 'agent-only' },
      agent: llm(w),
      human: llm(w),
    })
    expect(await runHeadless(runId)).toMatchObject({ done: 1, stalled: 0 })
    const log = await bodies(sessionId)
    expect(log.map((m) => m.kind)).toEqual(['decide', 'step', 'observation', 'decide', 'step', 'observation'])
    // The environment answered from the corpus: Search gives the page's first paragraph.
    const page = corpus.pages.get('calder lighthouse')
    expect(log[2]).toMatchObject({ kind: 'observation', text: page?.paragraphs[0], finished: false })
    expect(log[5]).toMatchObject({ kind: 'observation', finished: true })
    expect(log[4]).toMatchObject({ sender: 'agent', action: { type: 'finish', arg: 'Halvard Brenn' } })
    // The agent's calls: temperature 0, at most 100 tokens, stop before the step's observation.
    const calls = fake().requests.filter((r) => r.path.endsWith('/chat/completions'))
    const sent = calls.map((r) => r.body as { temperature?: number; max_tokens?: number; stop?: string[] })
    expect(sent).toHaveLength(2)
    expect(sent[0]).toMatchObject({ temperature: 0, max_tokens: 100, stop: ['\nObservation 1:'] })
    expect(sent[1]).toMatchObject({ stop: ['\nObservation 2:'] })
    const view = await execute(viewRun, w.researcher, { runId })
    if (!view.ok) throw new Error(view.error)
    const data = view.data as unknown as { data?: RehacRunView } & RehacRunView
    const rv = (data.data ?? data) as RehacRunView
    expect(rv.finished).toBe(1)
    expect(rv.summary.T).toBe(1)
    expect(rv.summary.C).toBe(0)
    expect(rv.summary.R).toBe(1)
  })

  it("a person's step makes the round trip; the view hides the gold answer until the end; bad input is a 400 per field", async () => {
    const w = await world()
    fake().setScript(rehacScript(0) as FakeRule[])
    const { runId, sessionId } = await run(w, {
      decider: { kind: 'program', program: 'human-only' },
      agent: llm(w),
      human: { kind: 'human', userId: w.expert.userId },
    })
    const llmCalls = () => fake().requests.filter((r) => r.path.endsWith('/chat/completions')).length
    const callsBefore = llmCalls()
    expect(await runHeadless(runId)).toMatchObject({ awaiting: 1 })
    const got = await execute(getSession, w.expert, { sessionId })
    if (!got.ok) throw new Error(got.error)
    const view = got.data.view as RehacSessionView
    expect(view).toMatchObject({
      t: 1,
      threshold: 7,
      due: { kind: 'step', seat: 'human', t: 1 },
      gold: null,
      result: null,
    })
    expect(JSON.stringify(got.data)).not.toContain('Halvard Brenn')
    const seq = (got.data.ask as { j: number }).j
    const send = (turn: Record<string, unknown>) => execute(submitTurn, w.expert, { sessionId, seq, ...turn })
    expect(await send({ action: { type: 'search', arg: 'Calder Lighthouse' } })).toMatchObject({
      status: 400,
      fieldErrors: { thought: expect.any(Array) },
    })
    expect(await send({ thought: 'x', action: { type: 'sql', arg: 'SELECT 1' } })).toMatchObject({
      status: 400,
      fieldErrors: { 'action.type': expect.any(Array) },
    })
    expect(await send({ thought: 'x', action: { type: 'search', arg: '  ' } })).toMatchObject({
      status: 400,
      fieldErrors: { 'action.arg': expect.any(Array) },
    })
    expect(await send({ thought: 'x' })).toMatchObject({ status: 400 })
    expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(1)
    const ok = await send({
      thought: 'The lighthouse first.',
      action: { type: 'search', arg: 'Calder Lighthouse' },
      suggestion: 'opened',
      ms: 4200,
    })
    expect(ok.ok).toBe(true)
    expect((await bodies(sessionId))[1]).toEqual({
      seq: 2,
      sender: 'human',
      kind: 'step',
      t: 1,
      thought: 'The lighthouse first.',
      action: { type: 'search', arg: 'Calder Lighthouse' },
      suggestion: 'opened',
      ms: 4200,
    })
    // The environment observes, the decider gives step 2 to the person again.
    expect(await runHeadless(runId)).toMatchObject({ awaiting: 1 })
    const again = await execute(getSession, w.expert, { sessionId })
    if (!again.ok) throw new Error(again.error)
    const v2 = again.data.view as RehacSessionView
    expect(v2.steps[0]?.observation).toBe(corpus.pages.get('calder lighthouse')?.paragraphs[0])
    const fin = await execute(submitTurn, w.expert, {
      sessionId,
      seq: (again.data.ask as { j: number }).j,
      thought: 'It says who designed it.',
      action: { type: 'finish', arg: 'Halvard Brenn' },
    })
    expect(fin.ok).toBe(true)
    expect(await runHeadless(runId)).toMatchObject({ done: 1 })
    const end = await execute(getSession, w.expert, { sessionId })
    if (!end.ok) throw new Error(end.error)
    const v3 = end.data.view as RehacSessionView
    expect(v3).toMatchObject({
      ended: true,
      gold: 'Halvard Brenn',
      result: { T: 1, em: true, humanSteps: 2, steps: 2 },
    })
    expect(v3.result?.R).toBeCloseTo(1 - 0.08 * 2)
    expect(v3.trajectory).toContain(
      '<solver> human\nThought 1: The lighthouse first.\nAction 1: Search[Calder Lighthouse]',
    )
    // The fake LLM was never asked: every step was the person's.
    expect(llmCalls()).toBe(callsBefore)
  })

  it('a model reply that breaks the step format is refused by the protocol and never stored', async () => {
    const w = await world()
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: 'I think the answer is Halvard Brenn.' }] }])
    const { runId, sessionId } = await run(w, {
      decider: { kind: 'program', program: 'agent-only' },
      agent: llm(w),
      human: llm(w),
    })
    expect(await runHeadless(runId)).toMatchObject({ stalled: 1 })
    const s = await db.protocolSession.findUniqueOrThrow({ where: { id: sessionId } })
    expect(s.stallError).toMatch(/invalid-message/)
    expect((await bodies(sessionId)).map((m) => m.kind)).toEqual(['decide'])
  })

  describe('the http-policy decider', () => {
    const seen: unknown[] = []
    let answer: unknown = { pHuman: 0.9 }
    const server = http.createServer((req, res) => {
      let raw = ''
      req.on('data', (c) => {
        raw += c
      })
      req.on('end', () => {
        seen.push(JSON.parse(raw))
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(answer))
      })
    })
    const url = new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/decide`)),
    )
    afterAll(() => new Promise<void>((r) => server.close(() => r())))
    // The policy service runs on this machine: name it in the allow-list restricted URLs are checked by.
    const allowed = process.env.PARLEY_ALLOWED_LLM_HOSTS
    beforeAll(() => {
      process.env.PARLEY_ALLOWED_LLM_HOSTS = '127.0.0.1'
    })
    afterAll(() => {
      if (allowed === undefined) delete process.env.PARLEY_ALLOWED_LLM_HOSTS
      else process.env.PARLEY_ALLOWED_LLM_HOSTS = allowed
    })

    it('POSTs the state text, takes p(human) by argmax, and refuses an answer outside the contract', async () => {
      const w = await world()
      fake().setScript(rehacScript(0) as FakeRule[])
      const decider = { kind: 'program', program: 'http-policy', params: { url: await url } }
      const a = await run(w, { decider, agent: llm(w), human: llm(w) })
      expect(await runHeadless(a.runId)).toMatchObject({ done: 1 })
      const log = await bodies(a.sessionId)
      const decisions = log.filter((m) => m.kind === 'decide')
      expect(decisions.map((d) => [d.solver, d.pHuman])).toEqual([
        ['human', 0.9],
        ['human', 0.9],
      ])
      // The simulated human acted: its calls carry the simulation's system line.
      expect(log.filter((m) => m.kind === 'step').every((m) => m.sender === 'human')).toBe(true)
      const last = fake()
        .requests.filter((r) => r.path.endsWith('/chat/completions'))
        .at(-1)?.body as {
        messages: Array<{ role: string; content: string }>
      }
      expect(last.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('simulate') })
      expect(seen[0]).toMatchObject({ t: 1, question: expect.stringContaining('lighthouse') })
      expect((seen[0] as { state: string }).state).toMatch(/^Question: .*\n<solver>$/)
      expect((seen[1] as { state: string }).state).toContain('<solver> human\nThought 1:')

      answer = { pHuman: 1.7 }
      const b = await run(w, { decider, agent: llm(w), human: llm(w) })
      // (on the job queue the step stalls with this error, lib/server/engine/jobs.ts; in-process it throws)
      await expect(runHeadless(b.runId)).rejects.toThrow(/policy service answer refused/)
      expect(await db.protocolMessage.count({ where: { sessionId: b.sessionId } })).toBe(0)
    })
  })
})
