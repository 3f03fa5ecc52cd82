import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import { stepUniform } from '@/protocols/rehac/core/deciders'
import { featureConfig, featureSize } from '@/protocols/rehac/core/policy'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import { QA_PROMPT_TEMPLATE } from '@/protocols/rehac/core/prompts'
import { rehacQaDataset, rehacScript } from '@/protocols/rehac/fixture'
import { rehacSetupFromForm } from '@/protocols/rehac/server/setup'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

async function world() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, expert, studyId: study.id, connectionId: conn.id, datasetId: await rehacQaDataset(study.id, 1) }
}
type World = Awaited<ReturnType<typeof world>>
const llm = (w: World) => ({ kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } })

async function play(w: World, decider: unknown, human: unknown = llm(w)) {
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'rehac',
    name: 'deciders',
    datasetId: w.datasetId,
    seats: { decider, agent: llm(w), human },
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const s = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  return { runId: r.data.id, sessionId: s.id }
}
const decisions = async (sessionId: string) =>
  (await db.protocolMessage.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } }))
    .filter((m) => (m.body as { kind: string }).kind === 'decide')
    .map((m) => m.body as unknown as Extract<RehacMessage, { kind: 'decide' }>)

describe('ReHAC deciders on the engine', () => {
  it("the prompt policy on an LLM: the paper's Table 5 with the trajectory so far, [Human] gives the step to the human", async () => {
    const w = await world()
    fake().setScript([
      { match: { model: 'gen', contains: 'Imagine you are a clever planner' }, replies: [{ text: '[Human]' }] },
      ...(rehacScript(0) as FakeRule[]),
    ])
    fake().reset()
    const { runId, sessionId } = await play(w, llm(w))
    expect(await runHeadless(runId)).toMatchObject({ done: 1 })
    expect((await decisions(sessionId)).map((d) => [d.solver, d.pHuman])).toEqual([
      ['human', null],
      ['human', null],
    ])
    const asks = fake()
      .requests.map((r) => r.body as { messages: Array<{ content: string }> })
      .filter((b) => b.messages[0]?.content.includes('clever planner'))
    expect(asks).toHaveLength(2)
    const second = asks[1]?.messages[0]?.content ?? ''
    expect(second.startsWith(QA_PROMPT_TEMPLATE.slice(0, QA_PROMPT_TEMPLATE.indexOf('Example 1:')))).toBe(true)
    expect(second).toContain('#Your unfinished trajectory#: Question: Who designed the lighthouse')
    expect(second).toContain('<solver> human\nThought 1:')
    expect(second).not.toContain('Halvard Brenn\n#')
  })

  it('the trained policy decides from its model in the seat params; random is the same for the same seed', async () => {
    const w = await world()
    fake().setScript(rehacScript(0) as FakeRule[])
    const features = featureConfig.parse({ hashDim: 16 })
    const model = {
      kind: 'rehac-logistic',
      version: 1,
      features,
      bias: 4,
      weights: Array(featureSize(features)).fill(0),
    }
    const a = await play(w, { kind: 'program', program: 'trained-policy', params: { model } })
    expect(await runHeadless(a.runId)).toMatchObject({ done: 1 })
    const ds = await decisions(a.sessionId)
    expect(ds.every((d) => d.solver === 'human' && Math.abs((d.pHuman ?? 0) - 1 / (1 + Math.exp(-4))) < 1e-9)).toBe(
      true,
    )
    const b = await play(w, { kind: 'program', program: 'trained-policy', params: { model: { ...model, bias: -4 } } })
    expect(await runHeadless(b.runId)).toMatchObject({ done: 1 })
    expect((await decisions(b.sessionId)).every((d) => d.solver === 'agent')).toBe(true)
    // random: the recorded seed and the session's key give the draw of each step (replayable).
    const c = await play(w, { kind: 'program', program: 'random', params: { seed: 7 } })
    expect(await runHeadless(c.runId)).toMatchObject({ done: 1 })
    const key = `${c.runId}/${(await db.protocolSession.findUniqueOrThrow({ where: { id: c.sessionId } })).key}`
    const rd = await decisions(c.sessionId)
    expect(rd.map((d) => d.solver)).toEqual(rd.map((d) => (stepUniform(7, key, d.t) < 0.5 ? 'human' : 'agent')))
    expect(rd.every((d) => d.pHuman === 0.5)).toBe(true)
  })

  it('the schedule program gives the steps to the solvers it names, then to `after`', async () => {
    const w = await world()
    fake().setScript(rehacScript(0) as FakeRule[])
    // h, a: the human (an LLM here) searches, the agent finishes at step 2.
    const { runId, sessionId } = await play(w, {
      kind: 'program',
      program: 'schedule',
      params: { solvers: 'ha', after: 'human' },
    })
    expect(await runHeadless(runId)).toMatchObject({ done: 1 })
    expect((await decisions(sessionId)).map((d) => [d.t, d.solver, d.pHuman])).toEqual([
      [1, 'human', 1],
      [2, 'agent', 0],
    ])
    // A schedule that is not made of a and h is refused when the run is set up, not when it runs.
    const bad = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'rehac',
      name: 'bad schedule',
      datasetId: w.datasetId,
      seats: {
        decider: { kind: 'program', program: 'schedule', params: { solvers: 'hx' } },
        agent: llm(w),
        human: llm(w),
      },
    })
    expect(bad).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { 'seats.decider': [expect.stringMatching(/^schedule: solvers: /)] },
    })
  })

  it('a person in the decider seat decides; a decision without a solver is a 400', async () => {
    const w = await world()
    fake().setScript(rehacScript(0) as FakeRule[])
    const { runId, sessionId } = await play(w, { kind: 'human', userId: w.expert.userId })
    expect(await runHeadless(runId)).toMatchObject({ awaiting: 1 })
    const got = await execute(getSession, w.expert, { sessionId })
    if (!got.ok) throw new Error(got.error)
    const seq = (got.data.ask as { j: number }).j
    expect(await execute(submitTurn, w.expert, { sessionId, seq })).toMatchObject({
      status: 400,
      fieldErrors: { solver: expect.any(Array) },
    })
    expect((await execute(submitTurn, w.expert, { sessionId, seq, solver: 'agent' })).ok).toBe(true)
    expect(await decisions(sessionId)).toEqual([
      { seq: 1, sender: 'decider', kind: 'decide', t: 1, solver: 'agent', pHuman: null },
    ])
  })

  it('the set-up form carries the decider program’s parameters', () => {
    const body = rehacSetupFromForm({
      name: 'x',
      datasetId: 'd',
      'seats.decider.kind': 'program:http-policy',
      'decider.url': 'http://127.0.0.1:9/decide',
      'decider.rule': 'threshold:0.7',
      'seats.agent.kind': 'llm',
      'seats.agent.model': '{"connectionId":"c"}',
      'seats.human.kind': 'claimable',
      threshold: '5',
      collection: 'on',
    })
    expect(body.seats.decider).toMatchObject({
      kind: 'program',
      program: 'http-policy',
      params: { url: 'http://127.0.0.1:9/decide', rule: { kind: 'threshold', value: 0.7 } },
    })
    expect(body).toMatchObject({ config: { threshold: 5 }, options: { collection: true } })
    const scheduled = rehacSetupFromForm({ 'seats.decider.kind': 'program:schedule', 'decider.solvers': ' HAH ' })
    expect(scheduled.seats.decider).toMatchObject({ program: 'schedule', params: { solvers: 'hah' } })
  })
})
