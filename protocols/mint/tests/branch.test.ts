import { afterAll, describe, expect, it } from 'vitest'
import type { FakeRule } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { runHeadless } from '@/lib/server/engine/headless'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { runTableLines } from '@/lib/server/services/run-export'
import { createRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import type { MintMessage } from '@/protocols/mint/core/protocol'
import { mintDataset } from '@/protocols/mint/fixture'
import { branchEpisode } from '@/protocols/mint/server/branch'
import { mintLeaderboard } from '@/protocols/mint/server/leaderboard'
import { mintRunView } from '@/protocols/mint/server/run-view'
import { sandboxStatus } from '@/protocols/mint/server/sandbox'
import type { MintSessionView } from '@/protocols/mint/server/views'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'
import { fakeConnection, useFakeLlm } from '../../../tests/support/llm'

/**
 * Branching an episode at a feedback turn (issue 26), against the fake OpenAI-compatible server and the
 * real Python tool: the fork holds the parent's messages before the feedback of turn t, its feedback
 * seat (the researcher who branched) gives other feedback, and the model resumes in the parent's Python
 * state at turn t (a variable only the parent's first cell defined). Only staff who may change the
 * study branch.
 */
const fake = useFakeLlm()
const status = await sandboxStatus()
afterAll(async () => {
  await stopBoss()
})

async function world() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const annotator = await makeUser('annotator')
  const viewer = await makeUser('viewer')
  const reader = await makeUser('researcher')
  const study = await makeStudy(researcher, [expert, annotator, viewer, { ...reader, role: 'viewer' }])
  const conn = await fakeConnection(study.id, fake())
  const datasetId = await mintDataset(study.id, 1)
  return { researcher, expert, annotator, viewer, reader, studyId: study.id, connectionId: conn.id, datasetId }
}

const bodies = (sessionId: string) =>
  db.protocolMessage
    .findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
    .then((ms) => ms.map((m) => m.body as unknown as MintMessage))

const NEW_FEEDBACK = 'Forget the typo: print the variable total itself.'

/** A finished episode with LLM feedback: a cell with a typo, feedback, the fixed print, feedback, the answer. */
async function finishedEpisode(w: Awaited<ReturnType<typeof world>>) {
  fake().reset()
  fake().setScript([
    {
      match: { model: 'gen', contains: NEW_FEEDBACK },
      replies: [{ text: '<thought> As told. </thought>\n<execute> print(total) </execute>' }],
    },
    {
      match: { model: 'fb' },
      replies: [
        { text: 'The variable is misspelt in the print.' },
        { text: 'This is GOOD. You have the number now: propose it.' },
      ],
    },
    {
      match: { model: 'gen', contains: 'You have the number now' },
      replies: [{ text: '<thought> It printed 12. </thought>\nThe answer is <solution> 12 </solution>.' }],
    },
    {
      match: { model: 'gen', contains: 'misspelt' },
      replies: [{ text: '<thought> The right name. </thought>\n<execute> print(total) </execute>' }],
    },
    {
      match: { model: 'gen' },
      replies: [
        { text: '<thought> Rolls left. </thought>\n<execute>\ntotal = 4 * 12 - 29 - 7\nprint(totl)\n</execute>' },
      ],
    },
  ] as FakeRule[])
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'mint',
    name: 'branching',
    datasetId: w.datasetId,
    seats: {
      agent: { kind: 'llm', model: { connectionId: w.connectionId, model: 'gen' } },
      feedback: { kind: 'llm', model: { connectionId: w.connectionId, model: 'fb' } },
    },
    config: { feedback: { mode: 'textual' } },
    start: true,
  })
  if (!r.ok) throw new Error(r.error)
  expect(await runHeadless(r.data.id)).toMatchObject({ done: 1, stalled: 0 })
  const parent = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  return { runId: r.data.id as string, parentId: parent.id }
}

describe.skipIf(!status.available)('MINT: branch an episode at a feedback turn', () => {
  it('the fork holds the parent’s turn 1, gets the new feedback from the researcher, and the model resumes in turn 1’s Python state', async () => {
    const w = await world()
    const { runId, parentId } = await finishedEpisode(w)
    const parentLog = await bodies(parentId)
    expect(parentLog.map((m) => m.sender)).toEqual([
      'agent',
      'tool',
      'feedback',
      'agent',
      'tool',
      'feedback',
      'agent',
      'env',
    ])
    expect((await db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe('done')

    const before = await execute(getSession, w.researcher, { sessionId: parentId })
    if (!before.ok) throw new Error(before.error)
    expect((before.data.view as MintSessionView).branchable).toEqual([1, 2])

    // A turn without feedback is refused, and nothing is made.
    expect(await execute(branchEpisode, w.researcher, { sessionId: parentId, turn: 3 })).toMatchObject({
      ok: false,
      status: 400,
    })
    const made = await execute(branchEpisode, w.researcher, { sessionId: parentId, turn: 1 })
    if (!made.ok) throw new Error(made.error)
    const forkId = made.data.sessionId
    expect(made.data).toMatchObject({ parentId, turn: 1, forkSeq: 2 })
    // The run runs again for the fork; the fork starts from the parent's first two messages.
    expect((await db.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe('running')
    expect(await bodies(forkId)).toEqual(parentLog.slice(0, 2))
    expect(await db.auditLog.count({ where: { action: 'mint.branch', resourceId: forkId } })).toBe(1)

    // Its feedback seat is the researcher's: the fork waits for them.
    expect(await runHeadless(runId)).toMatchObject({ awaiting: 1 })
    const got = await execute(getSession, w.researcher, { sessionId: forkId })
    if (!got.ok) throw new Error(got.error)
    expect(got.data.yourTurn).toBe(true)
    expect(got.data.ask).toMatchObject({ kind: 'feedback', j: 3 })
    expect((got.data.view as MintSessionView).branchOf).toEqual({ sessionId: parentId, turn: 1 })
    const sent = await execute(submitTurn, w.researcher, { sessionId: forkId, seq: 3, text: NEW_FEEDBACK })
    expect(sent).toMatchObject({ ok: true })

    // The model resumes with the new feedback (not the parent's), and its cell reads `total`, which only
    // the parent's first cell defined: the fork's sandbox replayed it.
    await runHeadless(runId)
    const fork = await bodies(forkId)
    expect(fork[2]).toMatchObject({ sender: 'feedback', text: NEW_FEEDBACK })
    expect(fork[3]).toMatchObject({ sender: 'agent', content: expect.stringContaining('print(total)') })
    expect(fork[4]).toMatchObject({ sender: 'tool', output: '12\n' })
    const last = fake()
      .requests.filter((r) => r.path.endsWith('/chat/completions') && r.model === 'gen')
      .at(-1)?.body as { messages: { content: string }[] }
    const history = last.messages.map((m) => m.content).join('\n')
    expect(history).toContain(`Expert feedback:\n${NEW_FEEDBACK}`)
    expect(history).not.toContain('misspelt')
    // Dense feedback: the researcher is asked again after the resumed turn.
    expect((await db.protocolSession.findUniqueOrThrow({ where: { id: forkId } })).awaitingSeat).toBe('feedback')

    // The parent lists its branch; the run page and the leaderboard count the run's own episode only.
    const after = await execute(getSession, w.researcher, { sessionId: parentId })
    if (!after.ok) throw new Error(after.error)
    expect((after.data.view as MintSessionView).branches).toEqual([{ sessionId: forkId, turn: 1, status: 'awaiting' }])
    expect(await mintRunView(runId)).toMatchObject({ total: 1, finished: 1, sr: 100 })
    const board = await mintLeaderboard(w.studyId)
    expect(board.runs.find((r) => r.id === runId)).toMatchObject({ records: 1, successes: 1, notCounted: 0 })

    // feedbackBy run: the fork keeps the run's feedback seat (the LLM); a second branch gets its own key.
    const byRun = await execute(branchEpisode, w.researcher, { sessionId: parentId, turn: 2, feedbackBy: 'run' })
    if (!byRun.ok) throw new Error(byRun.error)
    const second = await db.protocolSession.findUniqueOrThrow({ where: { id: byRun.data.sessionId } })
    expect((second.seats as { feedback: { kind: string } }).feedback.kind).toBe('llm')
    expect(second.forkSeq).toBe(5)
    expect(second.key).not.toBe(made.data.key)

    // The run's sessions table (D) says which rows are branches: their parent and fork point.
    const d: Array<{ session: string; parent: string | null; forkSeq: number | null }> = []
    for await (const line of runTableLines(runId, 'd', 'jsonl')) d.push(JSON.parse(line))
    expect(d.map((r) => [r.session, r.parent, r.forkSeq]).sort()).toEqual(
      [
        [parentId, null, null],
        [forkId, parentId, 2],
        [second.id, parentId, 5],
      ].sort(),
    )
  })

  it('only staff who may change the study branch: an expert, an annotator, a viewer and a study viewer cannot', async () => {
    const w = await world()
    const { parentId } = await finishedEpisode(w)
    for (const who of [w.expert, w.annotator, w.viewer])
      expect(await execute(branchEpisode, who, { sessionId: parentId, turn: 1 })).toMatchObject({
        ok: false,
        status: 403,
      })
    // A researcher account who only reads this study: forbidden by the study role.
    expect(await execute(branchEpisode, w.reader, { sessionId: parentId, turn: 1 })).toMatchObject({
      ok: false,
      status: 403,
    })
    const seen = await execute(getSession, w.reader, { sessionId: parentId })
    if (!seen.ok) throw new Error(seen.error)
    expect((seen.data.view as MintSessionView).branchable).toEqual([])
    // A researcher of another study does not see the episode.
    const stranger = await makeUser('researcher')
    expect(await execute(branchEpisode, stranger, { sessionId: parentId, turn: 1 })).toMatchObject({
      ok: false,
      status: 404,
    })
    expect(await db.protocolSession.count({ where: { parentId } })).toBe(0)
  })
})
