import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import { rehacQaDataset, rehacScript } from '@/protocols/rehac/fixture'
import { PROMPT_EXAMPLES } from '@/protocols/rehac/server/agents'
import { episodes, rehacRunView } from '@/protocols/rehac/server/views'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

const fake = useFakeLlm()

/**
 * The simulated human (model "person") finishes right whenever it acts; the agent ("gen") searches, then
 * finishes right. A collection on the first demo question grows "00" (R 1, the agent alone), "01" and
 * "1" (both R 0.92 with one human step; "1" has one step, "01" two).
 */
const script: FakeRule[] = [
  { match: { model: 'gen', contains: 'Imagine you are a clever planner' }, replies: [{ text: '[ChatGPT]' }] },
  {
    match: { model: 'person', contains: 'Observation 1:' },
    replies: [{ text: 'Thought 2: I know it.\nAction 2: Finish[Halvard Brenn]' }],
  },
  { match: { model: 'person' }, replies: [{ text: 'Thought 1: I know it.\nAction 1: Finish[Halvard Brenn]' }] },
  ...(rehacScript(0) as FakeRule[]),
]

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  const conn = await fakeConnection(study.id, fake())
  fake().setScript(script)
  const llm = (model: string) => ({ kind: 'llm', model: { connectionId: conn.id, model } })
  const create = async (input: Record<string, unknown>) => {
    const r = await execute(createRun, researcher, { studyId: study.id, protocol: 'rehac', name: 'r', ...input })
    if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
    return r.data.id
  }
  return { studyId: study.id, llm, create }
}
type World = Awaited<ReturnType<typeof world>>

const pathOf = async (sessionId: string) =>
  (await db.protocolMessage.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } }))
    .map((m) => m.body as unknown as RehacMessage)
    .filter((m) => m.kind === 'decide')
    .map((m) => (m.kind === 'decide' && m.solver === 'human' ? '1' : '0'))
    .join('')

async function collection(w: World) {
  const runId = await w.create({
    datasetId: await rehacQaDataset(w.studyId, 1),
    seats: {
      decider: { kind: 'program', program: 'tree', params: { seed: 3 } },
      agent: w.llm('gen'),
      human: w.llm('person'),
    },
    options: { collection: true },
  })
  expect(await runHeadless(runId)).toMatchObject({ stalled: 0 })
  const sessions = await db.protocolSession.findMany({ where: { runId } })
  const byPath = new Map<string, string>()
  for (const s of sessions) byPath.set(await pathOf(s.id), s.id)
  expect([...byPath.keys()].sort()).toEqual(['00', '01', '1'])
  const trajectory = new Map((await episodes(runId)).map((e) => [e.sessionId, e.trajectory?.trim() ?? '']))
  return { runId, byPath, trajectory }
}

/** A prompt-policy run (the decider on the LLM) on the dataset's instances `at` (indices), or all. */
async function promptPolicyRun(w: World, datasetId: string, at?: number[]) {
  const rows = await db.instance.findMany({ where: { datasetId }, orderBy: { index: 'asc' } })
  return w.create({
    datasetId,
    ...(at ? { instanceIds: at.map((i) => rows[i]?.id) } : {}),
    seats: { decider: w.llm('gen'), agent: w.llm('gen'), human: w.llm('person') },
  })
}
const examplesOf = async (runId: string) =>
  ((await db.run.findUniqueOrThrow({ where: { id: runId } })).config as { examples?: Record<string, unknown> }).examples

describe('the prompt policy’s few-shot examples from the study’s own data', () => {
  it('set-up picks the best agent-alone and the best human-step trajectory; the prompt shows them; the run page names them', async () => {
    const w = await world()
    const tree = await collection(w)
    // Another task set: its second task (the second demo question) is not one the examples answer.
    const other = await rehacQaDataset(w.studyId, 2)
    const runId = await promptPolicyRun(w, other, [1])
    const agentAlone = tree.byPath.get('00') as string
    // "1" and "01" both have R 0.92; the rule prefers fewer steps.
    const withHuman = tree.byPath.get('1') as string
    expect(await examplesOf(runId)).toEqual({
      source: 'study',
      sessionIds: [agentAlone, withHuman],
      example1: tree.trajectory.get(agentAlone),
      example2: tree.trajectory.get(withHuman),
    })
    expect(tree.trajectory.get(withHuman)).toContain('<solver> human\nThought 1: I know it.')
    fake().reset()
    expect(await runHeadless(runId)).toMatchObject({ done: 1 })
    const asks = fake()
      .requests.map((r) => r.body as { messages: Array<{ content: string }> })
      .map((b) => b.messages[0]?.content ?? '')
      .filter((c) => c.includes('clever planner'))
    expect(asks.length).toBeGreaterThan(0)
    for (const a of asks) {
      expect(a).toContain(
        `Example 1:\n\n${tree.trajectory.get(agentAlone)}\n\nExample 2:\n\n${tree.trajectory.get(withHuman)}\n\n`,
      )
      expect(a).not.toContain(PROMPT_EXAMPLES.qa[0])
      expect(a).toContain('#Your unfinished trajectory#: Question: In what year was the composer')
    }
    // Each decision records where its examples came from.
    const decision = await db.protocolMessage.findFirstOrThrow({
      where: { session: { runId }, sender: 'decider' },
      orderBy: { seq: 'asc' },
    })
    const ctx = await db.contextSnapshot.findFirst({ where: { sessionId: decision.sessionId, seq: decision.seq } })
    expect(JSON.stringify(ctx?.context ?? null)).toContain(withHuman)
    expect((await rehacRunView(runId, {})).examples).toEqual({ source: 'study', sessionIds: [agentAlone, withHuman] })
  })

  it('falls back to the built-in pair, and says why, when the study has none or every one is of a task the run plays', async () => {
    const w = await world()
    const empty = await promptPolicyRun(w, await rehacQaDataset(w.studyId, 1))
    expect(await examplesOf(empty)).toMatchObject({
      source: 'parley-default',
      reason: expect.stringMatching(/no finished QA/),
    })
    await collection(w)
    // This run plays the first demo question too (all the set's tasks): its trajectories would give the answer away.
    const same = await rehacQaDataset(w.studyId, 2)
    const runId = await promptPolicyRun(w, same)
    expect(await examplesOf(runId)).toMatchObject({ source: 'parley-default' })
    fake().reset()
    expect(await runHeadless(runId)).toMatchObject({ done: 2 })
    const ask = fake()
      .requests.map((r) => (r.body as { messages: Array<{ content: string }> }).messages[0]?.content ?? '')
      .find((c) => c.includes('clever planner'))
    expect(ask).toContain(PROMPT_EXAMPLES.qa[0])
    expect((await rehacRunView(runId, {})).examples).toMatchObject({ source: 'parley-default' })
    // A program decider gets no examples.
    const program = await w.create({
      datasetId: same,
      seats: { decider: { kind: 'program', program: 'agent-only' }, agent: w.llm('gen'), human: w.llm('person') },
    })
    expect(await examplesOf(program)).toBeUndefined()
  })
})
