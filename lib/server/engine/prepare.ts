import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { maxSessions } from '@/lib/limits.mjs'
import type { PoolClient } from 'pg'
import { sql } from '@/lib/server/db'
import { admitSessions, wakeStepWorkers } from '@/lib/server/engine/step-queue'
import { type InstanceRow, splitConfig } from '@/lib/server/engine/plugin'
import { pluginFor } from '@/lib/server/engine/plugins'
import { closeIfFinished, runStarting } from '@/lib/server/engine/schedule'
import { humanSeats, type Seats } from '@/lib/server/engine/seats'
import { badRequest } from '@/lib/server/errors'
import { bulkJobOptions, queue, wakeWorkers } from '@/lib/server/jobs/queue'
import { publish } from '@/lib/server/live'
import { log } from '@/lib/server/log'

/**
 * Creating a run's sessions, the same for every protocol. The plugin's plan says which instances
 * (given ids, or the dataset's first `sample` by index), how many repetitions, whether each
 * repetition's order is shuffled (seeded by the repetition, so reproducible), the seat variants
 * taken round robin; the plugin's `setup.snapshot` turns an instance row into what a session runs on,
 * and its scheduler's `waits` which sessions start waiting (held until it starts them). This module writes the rows, 1,000 per statement
 * (sessions and the people of their human seats together), with the run `preparing` until the last
 * one exists (Start is refused until then; progress = sessionsCreated / sessionsPlanned). Up to
 * `SYNC_SESSIONS` sessions are written during the request; more by a job on the queue
 * `experiment-sessions`, off the request path, yielding the event loop between batches. Every
 * session of the grid has the key `<repetition>:<position>`, unique per run, so a job that runs again
 * (a crashed worker's, coming back) skips what exists and each session is there exactly once.
 */
export const SESSIONS_QUEUE = 'experiment-sessions'

/** Sessions written during the request; above this, a job writes them. */
export const SYNC_SESSIONS = 1000

const BATCH = 1000

/** What the job needs to write the sessions: plain JSON (it travels in the job's payload). */
export interface SessionsPlan {
  datasetId: string
  /** These instances, in this order; otherwise the dataset's first `sample` by index (all when absent). */
  instanceIds?: string[]
  sample?: number
  repetitions: number
  shuffle: boolean
  /** Session i (counted across repetitions) gets seatCycle[i % seatCycle.length]: round robin over people. */
  seatCycle: Seats[]
  protocolVersion: string
  task: string
  config: unknown
  /** The run's status once every session exists: draft (waits for Start) or running (queued). */
  statusWhenReady: 'draft' | 'running'
}

export interface PrepareSessionsJob {
  runId: string
  studyId: string
  protocol: string
  plan: SessionsPlan
}

/** A deterministic shuffle (mulberry32) so every repetition's instance order is reproducible. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed >>> 0
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

/** How many sessions a plan makes over a dataset of `available` instances. */
export function plannedCount(plan: Pick<SessionsPlan, 'instanceIds' | 'sample' | 'repetitions'>, available: number) {
  const instances = plan.instanceIds?.length ?? Math.min(plan.sample ?? available, available)
  return { instances, sessions: instances * plan.repetitions }
}

/**
 * Refuse a run larger than PARLEY_MAX_SESSIONS (instances × repetitions), before anything is written.
 * `field` names the form field the person should change.
 */
export function checkSessionCap(instances: number, repetitions: number, field = 'sample'): number {
  const planned = instances * repetitions
  const cap = maxSessions()
  if (planned > cap) {
    const what = repetitions > 1 ? ` (${instances.toLocaleString('en')} instances × ${repetitions} repetitions)` : ''
    throw badRequest(
      `This would create ${planned.toLocaleString('en')} sessions${what}; one run may have at most ${cap.toLocaleString('en')} (PARLEY_MAX_SESSIONS). Use a sample of the instances or fewer repetitions.`,
      { [field]: [`At most ${cap.toLocaleString('en')} sessions in all.`] },
    )
  }
  return planned
}

/**
 * Create the sessions of a run that was just written with status `preparing` and
 * `sessionsPlanned = planned`: now for a small run, by a job for a large one. Returns whether they
 * are all there already.
 */
export async function createSessions(job: PrepareSessionsJob, planned: number): Promise<boolean> {
  if (planned <= SYNC_SESSIONS) {
    try {
      await prepareSessions(job)
      return true
    } catch (err) {
      // Leave it to the queue, which retries (what was written stays; the rest follows).
      log().error({ err, runId: job.runId }, 'creating the sessions failed; queued a retry')
    }
  }
  const b = await queue(SESSIONS_QUEUE)
  await b.send(SESSIONS_QUEUE, job, bulkJobOptions())
  await wakeWorkers(SESSIONS_QUEUE)
  return false
}

/**
 * The job: write every session of the plan that is not there yet, then move the run on. Every
 * statement runs on the one connection that holds the run's advisory lock: a job that held one pool
 * connection and waited for a second deadlocked the pool when as many runs were created at once as it
 * has connections (eight creates at once stalled every one of them).
 */
export async function prepareSessions(job: PrepareSessionsJob): Promise<void> {
  const client = await sql().connect()
  const key = `sessions:${job.runId}`
  let moved = false
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key])
    if (!rows[0]?.ok) throw new Error(`the sessions of ${job.runId} are being created by another worker`)
    try {
      moved = await prepareLocked(job, client)
    } catch (err) {
      await client
        .query('UPDATE "Run" SET "prepareError" = $2 WHERE id = $1', [
          job.runId,
          `Creating the sessions failed (retrying): ${(err as Error).message}`.slice(0, 2000),
        ])
        .catch(() => {})
      throw err
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key])
    }
  } finally {
    client.release()
  }
  // With the connection back in the pool: wake the workers and close a run with nothing to do.
  if (moved && job.plan.statusWhenReady === 'running') {
    await wakeStepWorkers()
    await closeIfFinished(job.runId)
  }
  if (moved) await publish(`run:${job.runId}`, { type: 'status', status: job.plan.statusWhenReady })
}

const defaultSnapshot = (row: InstanceRow) => ({
  input: row.input,
  prediction: row.prediction,
  explanation: row.explanation,
})

async function prepareLocked(
  { runId, studyId, protocol, plan }: PrepareSessionsJob,
  client: PoolClient,
): Promise<boolean> {
  const status = await client.query<{ status: string }>('SELECT status FROM "Run" WHERE id = $1', [runId])
  if (status.rows[0]?.status !== 'preparing') return false
  const plugin = await pluginFor(protocol)
  const snapshot = (await plugin.setup()).snapshot ?? defaultSnapshot
  const held = plugin.schedule?.waits
  const runConfig = held && splitConfig(plugin, plan.config, plan.task)
  const waits = (repetition: number, position: number) =>
    !!(held && runConfig && held(runConfig, { repetition, position }))
  const ids =
    plan.instanceIds ??
    (
      await client.query<{ id: string }>(
        `SELECT id FROM "Instance" WHERE "datasetId" = $1 ORDER BY index ${plan.sample ? 'LIMIT $2' : ''}`,
        plan.sample ? [plan.datasetId, plan.sample] : [plan.datasetId],
      )
    ).rows.map((r) => r.id)
  const cycle = plan.seatCycle
  const seats = JSON.stringify(cycle)
  const people = JSON.stringify(cycle.map((s) => humanSeats(s)))
  let i = 0
  for (let r = 1; r <= plan.repetitions; r++) {
    const order = plan.shuffle ? shuffled(ids, r) : ids
    for (let start = 0; start < order.length; start += BATCH) {
      const slice = order.slice(start, start + BATCH)
      const { rows: instances } = await client.query<InstanceRow>(
        'SELECT id, "datasetId", index, input, prediction, explanation, meta FROM "Instance" WHERE id = ANY($1)',
        [slice],
      )
      const byId = new Map(instances.map((x) => [x.id, x]))
      const rows = slice.map((instanceId, k) => {
        const inst = byId.get(instanceId)
        if (!inst) throw new Error(`instance ${instanceId} is gone`)
        return {
          id: randomUUID(),
          instanceId,
          instance: snapshot(inst),
          v: (i + k) % cycle.length,
          repetition: r,
          position: start + k,
          waiting: waits(r, start + k),
        }
      })
      i += slice.length
      // One statement: the batch and its people (skipping what a previous attempt wrote), only while the
      // run is still preparing as of the statement's start, and the count of what it wrote, always: a
      // cancel that commits while this statement waits for the run's row lock makes a condition on the
      // status false at the update but not at the insert, and the count lost the batch it had written.
      // The run's status as of the update says whether to go on (a cancel stops it here).
      const { rows: after } = await client.query<{ status: string }>(
        `WITH x AS (
           SELECT * FROM jsonb_to_recordset($8::jsonb)
             AS x(id text, "instanceId" text, instance jsonb, v int, repetition int, position int, waiting boolean)
         ), ins AS (
           INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task,
             "instanceId", instance, seats, repetition, position, key, status, "updatedAt")
           SELECT x.id, $2, $1, $3, $4, $5::jsonb, $6, x."instanceId", x.instance, ($7::jsonb) -> x.v,
             x.repetition, x.position, x.repetition || ':' || x.position,
             CASE WHEN x.waiting THEN 'waiting' ELSE 'queued' END, now()
           FROM x
           WHERE EXISTS (SELECT 1 FROM "Run" WHERE id = $1 AND status = 'preparing')
           ON CONFLICT ("runId", key) DO NOTHING
           RETURNING id
         ), seated AS (
           INSERT INTO "SessionSeat" ("sessionId", seat, "userId", claimable)
           SELECT ins.id, h.seat, h."userId", h.claimable
           FROM ins JOIN x ON x.id = ins.id
           CROSS JOIN LATERAL jsonb_to_recordset(($9::jsonb) -> x.v) AS h(seat text, "userId" text, claimable boolean)
         )
         UPDATE "Run" SET "sessionsCreated" = "sessionsCreated" + (SELECT count(*) FROM ins)
         WHERE id = $1 RETURNING status`,
        [
          runId,
          studyId,
          protocol,
          plan.protocolVersion,
          JSON.stringify(plan.config),
          plan.task,
          seats,
          JSON.stringify(rows),
          people,
        ],
      )
      if (after[0]?.status !== 'preparing') return false // cancelled meanwhile
      // Not awaited: a notice waits for a pool connection of its own, and this job holds one.
      void publish(`run:${runId}`, { type: 'progress' })
      await yieldToLoop()
    }
  }
  // The status and, for a run that starts at once, its first steps on the queue commit together: a
  // crash in between would leave a running run that nothing advances.
  await client.query('BEGIN')
  try {
    const r = await client.query(
      `UPDATE "Run" SET status = $2, "prepareError" = NULL, "updatedAt" = now(),
         "sessionsCreated" = (SELECT count(*) FROM "ProtocolSession" WHERE "runId" = $1)
       WHERE id = $1 AND status = 'preparing'`,
      [runId, plan.statusWhenReady],
    )
    if (r.rowCount === 1 && plan.statusWhenReady === 'running') {
      await runStarting(runId, client)
      await admitSessions(runId, { client })
    }
    await client.query('COMMIT')
    return r.rowCount === 1
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  }
}
