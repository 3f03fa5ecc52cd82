import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { handleStep, startWorkers } from '@/lib/server/engine/jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { admitSessions, INTERACTIVE_PRIORITY, STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { queue, stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun, getRun, startRun } from '@/lib/server/services/runs'
import { getSession, submitTurn } from '@/lib/server/services/sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { toyFixture } from './fixtures/toy'
import type { World } from './fixtures/types'
import { toyPlugin } from './toy/plugin'

/**
 * The engine's scheduling, on the toy protocol (this folder only): a run's limit of sessions in flight,
 * and a person's turn ahead of every queued batch step.
 */
const fake = useFakeLlm()
registerPlugin(toyPlugin)

let w: World
beforeAll(async () => {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  w = { researcher, expert, studyId: study.id, connectionId: conn.id, fake: fake() }
})
afterAll(async () => {
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

async function toyRun(n: number, extra: Record<string, unknown> = {}, human = false) {
  const datasetId = await toyFixture.dataset(w, n)
  const setup = human ? toyFixture.humanSetup(w, datasetId) : toyFixture.setup(w, datasetId)
  const r = await execute(createRun, w.researcher, { studyId: w.studyId, protocol: 'toy', ...setup, ...extra })
  if (!r.ok) throw new Error(r.error)
  return r.data
}

/**
 * The run's sessions with a step queued or being worked. A finished session's job is still active for
 * the moment its handler lets the next session in; the session has left, so it is not counted.
 */
async function inFlight(runId: string): Promise<number> {
  const { rows } = await sql().query<{ n: number }>(
    `SELECT count(DISTINCT j.data->>'sessionId')::int AS n FROM pgboss.job j
     JOIN "ProtocolSession" s ON s.id = j.data->>'sessionId'
     WHERE j.name = $1 AND j.state IN ('created', 'retry', 'active') AND j.data->>'runId' = $2
       AND s.status <> 'done'`,
    [STEP_QUEUE, runId],
  )
  return rows[0]?.n ?? 0
}

/** The `limited` flag of the run's queued steps. */
async function limitedFlags(runId: string): Promise<unknown[]> {
  const { rows } = await sql().query<{ limited: unknown }>(
    `SELECT data->'limited' AS limited FROM pgboss.job WHERE name = $1 AND data->>'runId' = $2`,
    [STEP_QUEUE, runId],
  )
  return rows.map((r) => r.limited)
}

describe('a limit of sessions in flight', () => {
  it('starts only that many, lets the next in as each leaves the queue, never holds more, and finishes', async () => {
    fake().setScript(toyFixture.script(5))
    const run = await toyRun(12, { maxInFlight: '3' })
    const started = await execute(startRun, w.researcher, { runId: run.id })
    expect(started.ok && started.data.enqueued).toBe(3)
    expect(await inFlight(run.id)).toBe(3)
    // Asking again admits nobody: the three already hold the run's places.
    expect(await admitSessions(run.id)).toBe(0)
    // Each job carries that its run is limited, so its end lets the next in without reading the run.
    expect(await limitedFlags(run.id)).toEqual([true, true, true])

    const workers = await startWorkers(4)
    let peak = 0
    try {
      // Under a loaded machine (the whole suite on two cores) 60 steps on four workers can take
      // longer than the default 30 s: the loop ends by its own deadline, inside the test's.
      const deadline = Date.now() + 75_000
      while (Date.now() < deadline) {
        peak = Math.max(peak, await inFlight(run.id))
        const r = await execute(getRun, w.researcher, { runId: run.id })
        if (r.ok && r.data.run.status === 'done') break
        await new Promise((res) => setTimeout(res, 25))
      }
    } finally {
      await workers.stop()
    }
    const after = await execute(getRun, w.researcher, { runId: run.id })
    expect(after.ok && after.data.run.status).toBe('done')
    expect(await db.protocolSession.count({ where: { runId: run.id, status: 'done' } })).toBe(12)
    expect(peak).toBeGreaterThan(0)
    expect(peak).toBeLessThanOrEqual(3)
  }, 90_000)

  it('lets the next session in when the ending job still counts as active (it does not count itself)', async () => {
    // CI once saw a run stay running for good: every job in flight ended at once, each still active
    // while it asked for the next session, so each saw the run full and none let one in.
    fake().setScript(toyFixture.script(5))
    const run = await toyRun(2, { maxInFlight: '1' })
    const started = await execute(startRun, w.researcher, { runId: run.id })
    expect(started.ok && started.data.enqueued).toBe(1)
    const { rows } = await sql().query<{ id: string; sessionId: string }>(
      `UPDATE pgboss.job SET state = 'active', started_on = now()
       WHERE name = $1 AND data->>'runId' = $2 RETURNING id, data->>'sessionId' AS "sessionId"`,
      [STEP_QUEUE, run.id],
    )
    const job = rows[0] as { id: string; sessionId: string }
    expect(rows).toHaveLength(1)
    await db.protocolSession.update({ where: { id: job.sessionId }, data: { status: 'done' } })
    // Asked by anyone else, the active job holds the run's one place.
    expect(await admitSessions(run.id)).toBe(0)
    // Asked by the ending job itself, the place is free.
    expect(await admitSessions(run.id, { onlyIfLimited: true, limited: true, endingJob: job.id })).toBe(1)
    expect(await inFlight(run.id)).toBe(1)
    await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND data->>'runId' = $2`, [STEP_QUEUE, run.id])
  })

  it('is a whole number from 1: anything else is refused with the field named, and nothing is created', async () => {
    const datasetId = await toyFixture.dataset(w, 1)
    const before = await db.run.count({ where: { studyId: w.studyId } })
    for (const bad of ['0', '-2', '2.5', 'many']) {
      const r = await execute(createRun, w.researcher, {
        studyId: w.studyId,
        protocol: 'toy',
        ...toyFixture.setup(w, datasetId),
        maxInFlight: bad,
      })
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.fieldErrors).toHaveProperty('maxInFlight')
    }
    expect(await db.run.count({ where: { studyId: w.studyId } })).toBe(before)
    // Empty (the form's blank field) means no limit.
    const none = await execute(createRun, w.researcher, {
      studyId: w.studyId,
      protocol: 'toy',
      ...toyFixture.setup(w, datasetId),
      maxInFlight: '',
    })
    expect(none.ok).toBe(true)
    if (none.ok) expect((await db.run.findUnique({ where: { id: none.data.id } }))?.maxInFlight).toBeNull()
  })
})

describe("a person's turn", () => {
  it('is stepped before every batch step already queued', async () => {
    fake().setScript(toyFixture.script(5))
    // The expert's session waits for their guess.
    const mine = await toyRun(1, {}, true)
    await execute(startRun, w.researcher, { runId: mine.id })
    const one = await startWorkers(1)
    let session: { yourTurn?: boolean; ask?: { j: number } | null } | undefined
    try {
      for (let i = 0; i < 200 && !session?.yourTurn; i++) {
        const r = await execute(getSession, w.expert, { sessionId: mine.firstSessionId as string })
        session = r.ok ? (r.data as typeof session) : undefined
        if (!session?.yourTurn) await new Promise((res) => setTimeout(res, 50))
      }
    } finally {
      await one.stop()
    }
    expect(session?.yourTurn).toBe(true)

    // A batch of 30 sessions queued (no worker takes them yet), then the expert's guess.
    const batch = await toyRun(30)
    await execute(startRun, w.researcher, { runId: batch.id })
    expect(await inFlight(batch.id)).toBe(30)
    // Without a limit, a job's end admits nobody, and says so without reading the run.
    expect(new Set(await limitedFlags(batch.id))).toEqual(new Set([false]))
    expect(await admitSessions(batch.id, { onlyIfLimited: true, limited: false })).toBe(0)
    const sent = await execute(submitTurn, w.expert, {
      sessionId: mine.firstSessionId as string,
      seq: session?.ask?.j,
      ...toyFixture.humanTurn({ ask: null, view: null }),
    })
    expect(sent.ok).toBe(true)

    // The next step any worker takes is the expert's session, though 30 were queued before it.
    const b = await queue(STEP_QUEUE)
    const [next] = await b.fetch<{ sessionId: string; interactive?: boolean }>(STEP_QUEUE, { batchSize: 1 })
    expect(next?.data.sessionId).toBe(mine.firstSessionId)
    expect(next?.data.interactive).toBe(true)
    const { rows } = await sql().query<{ priority: number }>(`SELECT priority FROM pgboss.job WHERE id = $1`, [
      next?.id,
    ])
    expect(rows[0]?.priority).toBe(INTERACTIVE_PRIORITY)
    if (next) await b.complete(STEP_QUEUE, next.id)
  })
})

describe("a job's quantum", () => {
  const waitingJobs = async (sessionId: string) =>
    (
      await sql().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry') AND data->>'sessionId' = $2`,
        [STEP_QUEUE, sessionId],
      )
    ).rows[0]?.n ?? 0
  const messages = (sessionId: string) => db.protocolMessage.count({ where: { sessionId } })

  it('hands the session back when another step waits, and goes on past it when none does', async () => {
    const slice = process.env.PARLEY_JOB_SLICE_MS
    process.env.PARLEY_JOB_SLICE_MS = '0' // every step is past the quantum
    try {
      await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
      fake().setScript(toyFixture.script(5))
      const run = await toyRun(2)
      const started = await execute(startRun, w.researcher, { runId: run.id })
      expect(started.ok && started.data.enqueued).toBe(2)
      const [a, b] = await db.protocolSession.findMany({ where: { runId: run.id }, orderBy: { position: 'asc' } })
      if (!a || !b) throw new Error('two sessions')
      // b's step waits: a's job takes one message and puts a at the back of the queue.
      await handleStep({ sessionId: a.id, runId: run.id })
      expect(await messages(a.id)).toBe(1)
      expect(await waitingJobs(a.id)).toBe(2) // the job the start queued (not taken here) and the one handed back
      // Nothing waits any more: b's job runs b to its end in one job, queueing nothing.
      await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
      await handleStep({ sessionId: b.id, runId: run.id })
      // The toy's guesser always says 50 and no target is 50: six guesses, six hints.
      expect(await messages(b.id)).toBe(12)
      expect(await db.protocolSession.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ status: 'done' })
      expect(await waitingJobs(b.id)).toBe(0)
    } finally {
      if (slice === undefined) delete process.env.PARLEY_JOB_SLICE_MS
      else process.env.PARLEY_JOB_SLICE_MS = slice
    }
  })
})
