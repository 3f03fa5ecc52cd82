import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { maxSessions } from '@/lib/limits.mjs'
import type { Prisma } from '@/lib/generated/prisma/client'
import { sql } from '@/lib/server/db'
import { badRequest } from '@/lib/server/errors'
import { bulkJobOptions, queue, wakeWorkers } from '@/lib/server/jobs/queue'
import { publish } from '@/lib/server/live'
import { afterEnqueueRun, enqueueRun } from '@/lib/server/services/experiment-runs'

/**
 * Creating an experiment's sessions, the same for every protocol: the protocol's service describes
 * them (a `SessionPlan`: which instances, how many repetitions, the seats, the fields every session
 * shares) and this module writes them, 1,000 per statement, with the experiment `preparing` until
 * the last one exists (Start is refused until then; progress = sessionsCreated / sessionsPlanned).
 * Up to `SYNC_SESSIONS` sessions are written during the request; more by a job on the queue
 * `experiment-sessions`, off the request path, yielding the event loop between batches. Every
 * session is keyed by (experiment, repetition, position), so a job that runs again (a crashed
 * worker's, coming back) skips what exists and each session is there exactly once.
 */
export const SESSIONS_QUEUE = 'experiment-sessions'

/** Sessions written during the request (one statement); above this, a job writes them. */
export const SYNC_SESSIONS = 1000

const BATCH = 1000

/** The seats of one session, and the person whose queue lists it (the human seat), if any. */
export interface SessionSeats {
  seats: Prisma.InputJsonValue
  assigneeId: string | null
}

export interface SessionPlan {
  datasetId: string
  /** These instances, in this order; otherwise the dataset's first `sample` by index (all when absent). */
  instanceIds?: string[]
  sample?: number
  repetitions: number
  /** Shuffle each repetition's instance order, seeded by the repetition number (reproducible). */
  shuffle: boolean
  /** Session i (counted across repetitions) gets seats[i % seats.length]: round robin over people. */
  seats: SessionSeats[]
  protocol: string
  protocolVersion: string
  task: string
  config: Prisma.InputJsonValue
  /** Added to every session's snapshot of its instance (x, y, e). */
  snapshotExtra?: Record<string, Prisma.InputJsonValue>
  /** The experiment's status once every session exists: draft (waits for Start) or running (queued). */
  statusWhenReady: 'draft' | 'running'
}

export interface PrepareSessionsJob {
  experimentId: string
  studyId: string
  plan: SessionPlan
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
 * Create the sessions of an experiment that was just written with status `preparing` and
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
      console.error(`[parley] creating the sessions of ${job.experimentId} failed; queued a retry:`, err)
    }
  }
  const b = await queue(SESSIONS_QUEUE)
  await b.send(SESSIONS_QUEUE, job, bulkJobOptions())
  await wakeWorkers(SESSIONS_QUEUE)
  return false
}

/** The job: write every session of the plan that is not there yet, then move the experiment on. */
export async function prepareSessions(job: PrepareSessionsJob): Promise<void> {
  const client = await sql().connect()
  const key = `sessions:${job.experimentId}`
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key])
    if (!rows[0]?.ok) throw new Error(`the sessions of ${job.experimentId} are being created by another worker`)
    try {
      await prepareLocked(job)
    } catch (err) {
      await sql()
        .query('UPDATE "Experiment" SET "prepareError" = $2 WHERE id = $1', [
          job.experimentId,
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
}

async function prepareLocked({ experimentId, studyId, plan }: PrepareSessionsJob): Promise<void> {
  const status = await sql().query<{ status: string }>('SELECT status FROM "Experiment" WHERE id = $1', [experimentId])
  if (status.rows[0]?.status !== 'preparing') return
  const ids =
    plan.instanceIds ??
    (
      await sql().query<{ id: string }>(
        `SELECT id FROM "Instance" WHERE "datasetId" = $1 ORDER BY index ${plan.sample ? 'LIMIT $2' : ''}`,
        plan.sample ? [plan.datasetId, plan.sample] : [plan.datasetId],
      )
    ).rows.map((r) => r.id)
  const seats = JSON.stringify(plan.seats.map((s) => s.seats))
  let i = 0
  for (let r = 1; r <= plan.repetitions; r++) {
    const order = plan.shuffle ? shuffled(ids, r) : ids
    for (let start = 0; start < order.length; start += BATCH) {
      const slice = order.slice(start, start + BATCH)
      const { rows: instances } = await sql().query<{
        id: string
        input: Prisma.InputJsonValue
        prediction: string
        explanation: string
      }>('SELECT id, input, prediction, explanation FROM "Instance" WHERE id = ANY($1)', [slice])
      const byId = new Map(instances.map((x) => [x.id, x]))
      const rows = slice.map((instanceId, k) => {
        const inst = byId.get(instanceId)
        if (!inst) throw new Error(`instance ${instanceId} is gone`)
        const seat = (i + k) % plan.seats.length
        return {
          id: randomUUID(),
          instanceId,
          instance: {
            input: inst.input,
            prediction: inst.prediction,
            explanation: inst.explanation,
            ...plan.snapshotExtra,
          },
          seat,
          assigneeId: plan.seats[seat]?.assigneeId ?? null,
          repetition: r,
          position: start + k,
        }
      })
      i += slice.length
      // One statement: the batch (skipping what a previous attempt wrote) and the count, only while
      // the experiment is still preparing (a cancel stops it here).
      const { rowCount } = await sql().query(
        `WITH ins AS (
           INSERT INTO "ProtocolSession" (id, "studyId", "experimentId", "assigneeId", protocol, "protocolVersion",
             config, task, "instanceId", instance, seats, repetition, position, "updatedAt")
           SELECT x.id, $2, $1, x."assigneeId", $3, $4, $5::jsonb, $6, x."instanceId", x.instance,
             ($7::jsonb) -> x.seat, x.repetition, x.position, now()
           FROM jsonb_to_recordset($8::jsonb) AS x(id text, "assigneeId" text, "instanceId" text, instance jsonb,
             seat int, repetition int, position int)
           WHERE EXISTS (SELECT 1 FROM "Experiment" WHERE id = $1 AND status = 'preparing')
           ON CONFLICT ("experimentId", repetition, position) DO NOTHING
           RETURNING 1)
         UPDATE "Experiment" SET "sessionsCreated" = "sessionsCreated" + (SELECT count(*) FROM ins)
         WHERE id = $1 AND status = 'preparing'`,
        [
          experimentId,
          studyId,
          plan.protocol,
          plan.protocolVersion,
          JSON.stringify(plan.config),
          plan.task,
          seats,
          JSON.stringify(rows),
        ],
      )
      if (!rowCount) return // cancelled meanwhile
      await publish(`experiment:${experimentId}`, { type: 'progress' })
      await yieldToLoop()
    }
  }
  // The status and, for a run that starts at once, its first steps on the queue commit together: a
  // crash in between would leave a running experiment that nothing advances.
  const client = await sql().connect()
  let moved = false
  try {
    await client.query('BEGIN')
    const r = await client.query(
      `UPDATE "Experiment" SET status = $2, "prepareError" = NULL, "updatedAt" = now(),
         "sessionsCreated" = (SELECT count(*) FROM "ProtocolSession" WHERE "experimentId" = $1)
       WHERE id = $1 AND status = 'preparing'`,
      [experimentId, plan.statusWhenReady],
    )
    moved = r.rowCount === 1
    if (moved && plan.statusWhenReady === 'running')
      await enqueueRun(experimentId, { executeSql: (text, values) => client.query(text, values) })
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }
  if (moved && plan.statusWhenReady === 'running') await afterEnqueueRun(experimentId)
  await publish(`experiment:${experimentId}`, { type: 'status', status: plan.statusWhenReady })
}

/** How many sessions a plan makes over a dataset of `available` instances. */
export function plannedCount(plan: Pick<SessionPlan, 'instanceIds' | 'sample' | 'repetitions'>, available: number) {
  const instances = plan.instanceIds?.length ?? Math.min(plan.sample ?? available, available)
  return { instances, sessions: instances * plan.repetitions }
}
