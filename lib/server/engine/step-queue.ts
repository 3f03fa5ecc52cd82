import type PgBoss from 'pg-boss'
import { sql } from '@/lib/server/db'
import { jobSettings, queue, wakeWorkers } from '@/lib/server/jobs/queue'

/**
 * Putting sessions on the step queue (and taking a run's off it). The workers that take them are in
 * jobs.ts; the runner enqueues the next session of a chain from here, so neither imports the other.
 */
export const STEP_QUEUE = 'session-step'
/** The queue before the engine (PXP and EVINCE shared it); workers drain what is left in it. */
export const LEGACY_QUEUES = ['pxp-step'] as const

export interface StepJob {
  sessionId: string
  /** The run (for cancel to drop its queued jobs); null for a session without a run. */
  experimentId: string | null
}

export async function enqueueSteps(
  sessionIds: readonly string[],
  experimentId: string | null,
  /** Insert through this connection (inside the caller's transaction); then call wakeStepWorkers after its commit. */
  db?: PgBoss.Db,
): Promise<void> {
  if (!sessionIds.length) return
  const b = await queue(STEP_QUEUE)
  const { expireInSeconds } = jobSettings()
  const jobs = sessionIds.map((sessionId) => ({
    name: STEP_QUEUE,
    data: { sessionId, experimentId } satisfies StepJob,
    expireInSeconds,
    retryLimit: 5,
    retryDelay: 1,
  }))
  if (db) await b.insert(jobs, { db })
  else {
    await b.insert(jobs)
    await wakeStepWorkers()
  }
}

/** Workers of this process fetch now instead of at their next poll (up to half a second later). */
export const wakeStepWorkers = () => wakeWorkers(STEP_QUEUE)

/** Drop the queued (not yet started) steps of a run. */
export async function dropQueuedSteps(experimentId: string): Promise<number> {
  try {
    const { rowCount } = await sql().query(
      `DELETE FROM pgboss.job WHERE name = ANY($1) AND state IN ('created', 'retry') AND data->>'experimentId' = $2`,
      [[STEP_QUEUE, ...LEGACY_QUEUES], experimentId],
    )
    return rowCount ?? 0
  } catch {
    return 0 // the queue's schema does not exist yet: nothing was ever queued
  }
}
