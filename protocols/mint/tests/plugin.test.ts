import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import type { ImportFile } from '@/lib/server/engine/datasets'
import { runHeadless } from '@/lib/server/engine/headless'
import { execute } from '@/lib/server/operation'
import { DEMO_CONNECTION_ID, ensureDemoConnection } from '@/lib/server/llm/runtime'
import { createRun, viewRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import { AGENT_LLM_SETTINGS, FEEDBACK_LLM_SETTINGS, type MintMessage } from '@/protocols/mint/core/protocol'
import { mintDataset } from '@/protocols/mint/fixture'
import { mintDatasets } from '@/protocols/mint/server/datasets'
import { mintPlugin } from '@/protocols/mint/server/plugin'
import { sandboxOf, sandboxStatus } from '@/protocols/mint/server/sandbox'
import type { MintSessionView } from '@/protocols/mint/server/views'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'
import { describeShared, sharedDir } from '../../../tests/support/shared'

/**
 * MINT on the engine, against the fake OpenAI-compatible server: the evaluated model and the feedback
 * model are real SDK calls; the Python tool and the code tests run in the real sandbox (bubblewrap), so
 * those cases are skipped with the reason when it is unavailable, unless PARLEY_MINT_SANDBOX_REQUIRED=1.
 */
const fake = useFakeLlm()

const status = await sandboxStatus()
if (!status.available) {
  if (process.env.PARLEY_MINT_SANDBOX_REQUIRED === '1') throw new Error(`sandbox unavailable: ${status.reason}`)
  console.warn(`MINT plugin tests that run the Python tool are skipped: ${status.reason}`)
}

// The first demo task: 4 trays of 12 rolls, 29 sold, 7 given away → 12.
const GSM8K_TASK = 0

async function world(tasks?: Parameters<typeof mintDataset>[2]) {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  const datasetId = await mintDataset(study.id, GSM8K_TASK + 1, tasks)
  return { researcher, expert, studyId: study.id, connectionId: conn.id, datasetId }
}
type World = Awaited<ReturnType<typeof world>>

const llm = (w: World, model: string) => ({ kind: 'llm', model: { connectionId: w.connectionId, model } })
const NO_FEEDBACK = { kind: 'program', program: 'no-feedback' }

async function create(w: World, seats: Record<string, unknown>, config: Record<string, unknown> = {}) {
  return execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'mint',
    name: 'mint test',
    datasetId: w.datasetId,
    seats,
    config,
  })
}
async function run(w: World, seats: Record<string, unknown>, config: Record<string, unknown> = {}) {
  const r = await create(w, seats, config)
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const session = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  return { runId: r.data.id, sessionId: session.id }
}

const bodies = (sessionId: string) =>
  db.protocolMessage
    .findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
    .then((ms) => ms.map((m) => m.body as unknown as MintMessage))

const chatBodies = (model: string) =>
  fake()
    .requests.filter((r) => r.path.endsWith('/chat/completions') && r.model === model)
    .map((r) => r.body as { messages: Array<{ role: string; content: string }>; [k: string]: unknown })

describe.skipIf(!status.available)('MINT on the engine, with the Python tool', () => {
  it('an episode writes code, gets an error, fixes it after LLM feedback and solves a GSM8K task', async () => {
    const w = await world()
    fake().reset()
    fake().setScript([
      {
        match: { model: 'fb' },
        replies: [
          { text: 'The variable is misspelt in the print: use the name you assigned.' },
          { text: 'This is GOOD. You have the number now: propose it.' },
        ],
      },
      {
        match: { model: 'gen', contains: 'You have the number now' },
        replies: [{ text: '<thought> It printed 12. </thought>\nThe answer is <solution> 12 </solution>.' }],
      },
      {
        match: { model: 'gen', contains: 'misspelt' },
        replies: [{ text: '<thought> I print the right name. </thought>\n<execute> print(total) </execute>' }],
      },
      {
        match: { model: 'gen' },
        replies: [
          {
            text: '<thought> Rolls baked minus sold and given. </thought>\n<execute>\ntotal = 4 * 12 - 29 - 7\nprint(totl)\n</execute>',
          },
        ],
      },
    ] as FakeRule[])
    const { runId, sessionId } = await run(
      w,
      { agent: llm(w, 'gen'), feedback: llm(w, 'fb') },
      {
        feedback: { mode: 'textual' },
      },
    )
    expect(await runHeadless(runId)).toMatchObject({ done: 1, stalled: 0 })
    const log = await bodies(sessionId)
    expect(log.map((m) => m.sender)).toEqual(['agent', 'tool', 'feedback', 'agent', 'tool', 'feedback', 'agent', 'env'])
    // The first cell raised (its assignment ran); the second read the session's state: it persists.
    expect(log[1]).toMatchObject({ sender: 'tool', output: expect.stringContaining('NameError') })
    expect(log[4]).toMatchObject({ sender: 'tool', output: '12\n' })
    expect(log[7]).toMatchObject({ sender: 'env', correct: true })
    const s = await execute(getSession, w.researcher, { sessionId })
    if (!s.ok) throw new Error(s.error)
    const view = s.data.view as MintSessionView
    expect(view).toMatchObject({ finished: true, success: true, reason: 'task_success' })
    expect(view.counts).toEqual({ propose_solution: 1, use_tool: 2, invalid_action: 0 })
    // The evaluated model: the paper's settings, the released history (one user message first, the
    // observation with the countdown and the expert's feedback after each turn).
    const agent = chatBodies('gen')
    expect(agent).toHaveLength(3)
    expect(agent[0]).toMatchObject({
      temperature: 0,
      max_tokens: AGENT_LLM_SETTINGS.maxTokens,
      stop: [...AGENT_LLM_SETTINGS.stop],
    })
    expect(agent[0]?.messages).toHaveLength(1)
    expect(agent[1]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(agent[1]?.messages[2]?.content).toMatch(
      /^Observation:\n[\s\S]*NameError[\s\S]*You have 4 steps left and 2 chances to propose solution left\.\n\nExpert feedback:\nThe variable is misspelt/,
    )
    // The feedback model: its settings, the trajectory from Task: on, the reference withheld (no_GT).
    const fb = chatBodies('fb')
    expect(fb).toHaveLength(2)
    expect(fb[0]).toMatchObject({ temperature: 0, max_tokens: FEEDBACK_LLM_SETTINGS.maxTokens })
    const prompt = fb[0]?.messages[0]?.content ?? ''
    expect(prompt).toContain(
      'Correct solution (please DO NOT disclose the correct solution to the assistant): NOT GIVEN',
    )
    expect(prompt).toContain('Task:\nOrla bakes 4 trays')
    // Every cell is a recorded program run; the episode's sandbox is released with the session.
    const runs = await db.programRun.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
    expect(runs.map((r) => [r.program, r.exitStatus])).toEqual([
      ['python', 0],
      ['python', 0],
    ])
    expect(runs[1]?.input).toMatchObject({ cells: ['total = 4 * 12 - 29 - 7\nprint(totl)'], code: 'print(total)' })
    expect(sandboxOf(sessionId)).toBeUndefined()
    // The authors' results.jsonl record.
    const exports = await mintPlugin.exports?.()
    const rows: Record<string, unknown>[] = []
    for await (const r of exports?.tables?.episodes?.rows(runId, 'jsonl') ?? []) rows.push(r)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      state: { success: true, terminate_reason: 'task_success', agent_action_count: { use_tool: 2 } },
      task: { task_name: 'reasoning', dataset: 'gsm8k', reference: '12' },
    })
  })

  it('the offline demo model solves the demo tasks: a cell that prints the number, then its proposal; short feedback', async () => {
    const w = await world()
    await ensureDemoConnection()
    const demo = { kind: 'llm', model: { connectionId: DEMO_CONNECTION_ID } }
    const { runId, sessionId } = await run(w, { agent: demo, feedback: demo }, { feedback: { mode: 'binary' } })
    expect(await runHeadless(runId)).toMatchObject({ done: 1, stalled: 0 })
    const log = await bodies(sessionId)
    expect(log.map((m) => m.sender)).toEqual(['agent', 'tool', 'feedback', 'agent', 'env'])
    expect(log[1]).toMatchObject({ output: '12\n' })
    expect(log[2]).toMatchObject({ text: expect.stringMatching(/^This is GOOD\. /) })
    expect(log[4]).toMatchObject({ correct: true })
    // Binary mode keeps the first sentence's GOOD / BAD.
    const s = await execute(getSession, w.researcher, { sessionId })
    if (!s.ok) throw new Error(s.error)
    expect((s.data.view as MintSessionView).turns[0]?.feedback).toBe('This is GOOD.')
    // The run page: SR at the run's own k, per type and data set, the reasons, the invalid-action ratio.
    const page = await execute(viewRun, w.researcher, { runId })
    expect(page).toMatchObject({
      ok: true,
      data: {
        data: {
          k: 5,
          p: 2,
          total: 1,
          finished: 1,
          sr: 100,
          byType: { reasoning: 100 },
          byTask: { gsm8k: 100 },
          reasons: { task_success: 1 },
          invalidRatio: 0,
          invalidFlagged: false,
        },
      },
    })
  })

  it('a code task (MBPP) is checked by its tests in the sandbox: a wrong function fails, the right one passes', async () => {
    const w = await world([
      {
        id: 'mbpp-ours-1',
        dataset: 'mbpp',
        prompt: '"""\nWrite a function to add two numbers.\nassert add_two(1, 2) == 3\n"""\n',
        reference: 'assert add_two(1, 2) == 3\nassert add_two(-4, 4) == 0',
      },
    ])
    fake().reset()
    fake().setScript([
      {
        match: { model: 'gen', contains: 'return a - b' },
        replies: [
          { text: '<thought> Fix the sign. </thought>\n<solution>\ndef add_two(a, b):\n    return a + b\n</solution>' },
        ],
      },
      {
        match: { model: 'gen' },
        replies: [
          { text: '<thought> Easy. </thought>\n<solution>\ndef add_two(a, b):\n    return a - b\n</solution>' },
        ],
      },
    ] as FakeRule[])
    const { runId, sessionId } = await run(w, { agent: llm(w, 'gen'), feedback: NO_FEEDBACK })
    expect(await runHeadless(runId)).toMatchObject({ done: 1, stalled: 0 })
    const log = await bodies(sessionId)
    expect(log.filter((m) => m.sender === 'env').map((m) => (m.sender === 'env' ? m.correct : null))).toEqual([
      false,
      true,
    ])
    const runs = await db.programRun.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
    expect(runs.map((r) => r.program)).toEqual(['tests', 'tests'])
    expect(runs[0]?.output).toMatchObject({ passed: false, exception: 'AssertionError' })
    expect(runs[1]?.output).toMatchObject({ passed: true })
  })

  it('a person in the feedback seat is asked for feedback: the ground truth only when the run gives it, time recorded', async () => {
    const w = await world()
    fake().reset()
    fake().setScript([
      {
        match: { model: 'gen', contains: 'Print the variable total' },
        replies: [{ text: '<solution> 12 </solution>' }],
      },
      { match: { model: 'gen' }, replies: [{ text: '<execute> total = 4 * 12 - 29 - 7 </execute>' }] },
    ] as FakeRule[])
    const { runId, sessionId } = await run(
      w,
      { agent: llm(w, 'gen'), feedback: { kind: 'human', userId: w.expert.userId } },
      { feedback: { mode: 'textual', groundTruth: true } },
    )
    expect(await runHeadless(runId)).toMatchObject({ awaiting: 1 })
    const row = await db.protocolSession.findUniqueOrThrow({ where: { id: sessionId } })
    expect(row.awaitingSeat).toBe('feedback')
    const got = await execute(getSession, w.expert, { sessionId })
    if (!got.ok) throw new Error(got.error)
    expect(got.data.yourTurn).toBe(true)
    expect(got.data.ask).toMatchObject({ kind: 'feedback' })
    const view = got.data.view as MintSessionView
    expect(view.groundTruth).toBe('12')
    expect(view.turns[0]).toMatchObject({ action: 'use_tool', stepsLeft: 4, proposalsLeft: 2 })
    expect(view.turns[0]?.observation).toContain('[Executed Successfully with No Output]')
    const seq = (got.data.ask as { j: number }).j
    const sent = await execute(submitTurn, w.expert, {
      sessionId,
      seq,
      text: 'Print the variable total before you answer.',
      elapsedMs: 96_000,
    })
    expect(sent).toMatchObject({ ok: true })
    const stored = await db.protocolMessage.findUniqueOrThrow({ where: { sessionId_seq: { sessionId, seq } } })
    expect(stored.authorUserId).toBe(w.expert.userId)
    expect(JSON.stringify(stored.payload)).toContain('"elapsedMs":96000')
    // The model reads the expert's feedback in its next user message, and solves the task.
    await runHeadless(runId)
    const agent = chatBodies('gen')
    expect(agent.at(-1)?.messages.at(-1)?.content).toContain(
      'Expert feedback:\nPrint the variable total before you answer.',
    )
    expect((await db.protocolSession.findUniqueOrThrow({ where: { id: sessionId } })).status).toBe('done')
  })
})

describe('MINT on the engine', () => {
  it("a request too long for the model's context ends the episode with error; other failures stall it", async () => {
    const w = await world()
    fake().reset()
    fake().setScript([
      {
        match: { model: 'gen' },
        replies: [
          {
            fault: 'status',
            status: 400,
            message: "This model's maximum context length is 4097 tokens. Please reduce the length of the messages.",
          },
        ],
      },
    ] as FakeRule[])
    const { runId, sessionId } = await run(w, { agent: llm(w, 'gen'), feedback: NO_FEEDBACK })
    expect(await runHeadless(runId)).toMatchObject({ done: 1, stalled: 0 })
    const log = await bodies(sessionId)
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({
      sender: 'agent',
      content: '',
      error: expect.stringContaining('maximum context length'),
    })
    const s = await execute(getSession, w.researcher, { sessionId })
    if (!s.ok) throw new Error(s.error)
    expect(s.data.view).toMatchObject({ finished: true, success: false, reason: 'error' })
    fake().setScript([{ match: { model: 'gen' }, replies: [{ fault: '500' }] }] as FakeRule[])
    const other = await run(w, { agent: llm(w, 'gen'), feedback: NO_FEEDBACK })
    expect(await runHeadless(other.runId)).toMatchObject({ stalled: 1 })
    expect(await db.protocolMessage.count({ where: { sessionId: other.sessionId } })).toBe(0)
  })

  it("a person's bad reply is refused with a clear error and nothing stored; binary feedback is GOOD or BAD", async () => {
    const w = await world()
    const { runId, sessionId } = await run(
      w,
      { agent: { kind: 'human', userId: w.expert.userId }, feedback: { kind: 'human', userId: w.expert.userId } },
      { feedback: { mode: 'binary' } },
    )
    expect(await runHeadless(runId)).toMatchObject({ awaiting: 1 })
    const got = await execute(getSession, w.expert, { sessionId })
    if (!got.ok) throw new Error(got.error)
    expect(got.data.ask).toMatchObject({ kind: 'turn', j: 1 })
    // The model's seat never sees the reference, even when the expert is the same person.
    expect((got.data.view as MintSessionView).groundTruth).toBeNull()
    expect(JSON.stringify(got.data)).not.toMatch(/"(reference|prediction)":"12"/)
    const send = (text: unknown, seq = 1) => execute(submitTurn, w.expert, { sessionId, seq, text })
    expect(await send('   ')).toMatchObject({ status: 400, fieldErrors: { text: expect.any(Array) } })
    expect(await send('x'.repeat(100_001))).toMatchObject({ status: 400 })
    expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(0)
    // A reply without <execute> or <solution> is the paper's invalid action: accepted, it uses a turn.
    expect(await send('I think the answer is twelve.')).toMatchObject({ ok: true })
    const view = await execute(getSession, w.expert, { sessionId })
    if (!view.ok) throw new Error(view.error)
    expect(view.data.ask).toMatchObject({ kind: 'feedback', j: 2 })
    expect((view.data.view as MintSessionView).turns[0]?.observation).toContain("I don't understand your input.")
    expect(await send('Looks fine to me', 2)).toMatchObject({ status: 400, fieldErrors: { text: expect.any(Array) } })
    expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(1)
    expect(await send('b', 2)).toMatchObject({ ok: true })
    const log = await bodies(sessionId)
    expect(log[1]).toMatchObject({ sender: 'feedback', text: 'This is BAD.' })
  })

  it('the set-up refuses what does not fit: feedback without a seat, a seat without feedback, another kind of dataset', async () => {
    const w = await world()
    expect(
      await create(w, { agent: llm(w, 'gen'), feedback: NO_FEEDBACK }, { feedback: { mode: 'textual' } }),
    ).toMatchObject({
      status: 400,
      fieldErrors: { 'seats.feedback': expect.any(Array) },
    })
    expect(await create(w, { agent: llm(w, 'gen'), feedback: llm(w, 'fb') })).toMatchObject({
      status: 400,
      fieldErrors: { 'config.feedback.mode': expect.any(Array) },
    })
    expect(await create(w, { agent: llm(w, 'gen'), feedback: NO_FEEDBACK }, { k: 2, p: 3 })).toMatchObject({
      status: 400,
    })
    const other = await db.dataset.create({
      data: { studyId: w.studyId, name: 'x', kind: 'rehac-qa', source: 'inline' },
    })
    const r = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'mint',
      name: 'wrong kind',
      datasetId: other.id,
      seats: { agent: llm(w, 'gen'), feedback: NO_FEEDBACK },
    })
    expect(r).toMatchObject({ status: 400, fieldErrors: { datasetId: expect.any(Array) } })
    // The form learns whether the Python tool can run here (and why not).
    const setup = await mintPlugin.setup()
    expect(await setup.formData?.(w.researcher, w.studyId)).toEqual({
      sandbox: status.available ? { available: true } : expect.objectContaining({ available: false }),
      taskSets: { [w.datasetId]: { taskType: 'reasoning', corpusPages: 0 } },
    })
  })

  it('a task file line without its fields is refused by line; ALFWorld is refused as not installed', async () => {
    const kind = mintDatasets['mint-tasks']!
    expect(await taskItems('gsm8k', '{"id": 0}\n')).toMatchObject([{ line: 0, fatal: true }])
    expect(kind.options?.safeParse({ dataset: 'alfworld' }).success).toBe(false)
    expect(kind.options?.safeParse({ dataset: 'nope' }).success).toBe(false)
  })
})

/** Items of a `mint-tasks` import of one test_prompts.json text (the dataset kind's own parser). */
async function taskItems(dataset: string, text: string) {
  const kind = mintDatasets['mint-tasks']!
  const data: ImportFile = {
    role: 'data',
    name: 'test_prompts.json',
    size: text.length,
    async *read() {
      yield Buffer.from(text)
    },
  }
  const out = []
  const options = kind.options?.parse({ dataset })
  for await (const i of kind.parse({ data, attachments: [], options })) out.push(i)
  return out
}

describeShared(
  "MINT tasks: the authors' test_prompts.json files import as they are",
  () => {
    it('imports GSM8K, HumanEval and TheoremQA tasks with their references', async () => {
      const read = (d: string) =>
        readFileSync(path.join(sharedDir('datasets', 'mint'), 'tasks', d, 'test_prompts.json'), 'utf8')
      const gsm = await taskItems('gsm8k', read('gsm8k'))
      expect(gsm).toHaveLength(5)
      expect(gsm[0]).toMatchObject({ row: { input: { id: '0', dataset: 'gsm8k' }, prediction: '6' } })
      const he = await taskItems('humaneval', read('humaneval'))
      expect(he[0]).toMatchObject({
        row: { input: { dataset: 'humaneval' }, prediction: expect.stringMatching(/check\(has_close_elements\)$/) },
      })
      const tq = await taskItems('theoremqa', read('theoremqa'))
      expect(tq.every((i) => 'row' in i && typeof i.row.input.answerType === 'string')).toBe(true)
    })
  },
  'datasets/mint',
)
