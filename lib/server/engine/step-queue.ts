import type PgBoss from 'pg-boss'
import { sql } from '@/lib/server/db'
import { jobSettings, queue, wakeWorkers } from '@/lib/server/jobs/queue'

/**
 * Putting sessions on the step queue (and taking a run's off it). The workers that take them are in
 * jobs.ts; the run scheduler (schedule.ts) queues the sessions it starts from here, so neither imports the other.
 */
export const STEP_QUEUE = 'session-step'

export interface StepJob {
  sessionId: string
  /** The run (for cancel to drop its queued jobs); null for a session without a run. */
  runId: string | null
  /** Set off by a person's turn: taken before every batch step (and kept when its quantum ends). */
  interactive?: boolean
  /**
   * Whether the run had a limit of sessions in flight when the step was queued (admitSessions knows):
   * when the job ends, only then is the next waiting session let in; absent (a person's turn, an older
   * job), the run's row is read to find out.
   */
  limited?: boolean
}

/** The queue's priority of a person's step over batch steps (pg-boss takes higher first). */
export const INTERACTIVE_PRIORITY = 10

export async function enqueueSteps(
  sessionIds: readonly string[],
  runId: string | null,
  /** Insert through this connection (inside the caller's transaction); then call wakeStepWorkers after its commit. */
  db?: PgBoss.Db,
  /** A person's turn set these steps off: they go before the batch's (INTERACTIVE_PRIORITY). */
  opts: { interactive?: boolean; limited?: boolean } = {},
): Promise<void> {
  if (!sessionIds.length) return
  const b = await queue(STEP_QUEUE)
  const { expireInSeconds } = jobSettings()
  const jobs = sessionIds.map((sessionId) => ({
    name: STEP_QUEUE,
    data: {
      sessionId,
      runId,
      ...(opts.interactive ? { interactive: true } : {}),
      ...(opts.limited !== undefined ? { limited: opts.limited } : {}),
    } satisfies StepJob,
    ...(opts.interactive ? { priority: INTERACTIVE_PRIORITY } : {}),
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
export async function dropQueuedSteps(runId: string): Promise<number> {
  try {
    const { rowCount } = await sql().query(
      `DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry') AND data->>'runId' = $2`,
      [STEP_QUEUE, runId],
    )
    return rowCount ?? 0
  } catch {
    return 0 // the queue's schema does not exist yet: nothing was ever queued
  }
}

/**
 * Put the run's queued sessions that have no step on the queue on it: all of them, or as many as keep
 * the run within its limit of sessions in flight (`Run.maxInFlight`: sessions with a step queued
 * or being worked). Called when a run starts or resumes, after a Retry, and (for a run with a limit)
 * whenever one of its jobs ends without handing its session back, so the next waiting session takes its
 * place. Under a transaction-level advisory lock per run, so two workers ending jobs at once never queue
 * one session twice or pass the limit; with `client` (in a transaction) inside the caller's, whose
 * commit then needs a wakeStepWorkers. Nothing unless the run is running. Returns how many it queued.
 *
 * A person's turn is not admitted here: it is queued at once (enqueueSteps, interactive), so an expert
 * never waits for a batch's slot; for that moment the run may hold one session more than its limit.
 */
export async function admitSessions(
  runId: string,
  /**
   * `limited`: what the ending job knows of the run (StepJob.limited), which spares reading its row.
   * `endingJob`: the id of the job that calls (its session left the queue): it is still active until its
   * handler returns, and counting it would leave no room, so when every job in flight ends at once none
   * would let the next in and the run would wait forever.
   */
  opts: { client?: { query: PgQuery }; onlyIfLimited?: boolean; limited?: boolean; endingJob?: string } = {},
): Promise<number> {
  if (opts.onlyIfLimited && opts.limited === false) return 0
  if (opts.onlyIfLimited && opts.limited === undefined) {
    const { rows } = await sql().query<{ limited: boolean }>(
      `SELECT "maxInFlight" IS NOT NULL AS limited FROM "Run" WHERE id = $1 AND status = 'running'`,
      [runId],
    )
    if (!rows[0]?.limited) return 0
  }
  await queue(STEP_QUEUE) // the queue's schema exists before it is read
  const own = opts.client ? undefined : await sql().connect()
  const client = opts.client ?? (own as { query: PgQuery })
  try {
    if (own) await client.query('BEGIN')
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('run-admission:' || $1))`, [runId])
    const { rows: run } = await client.query(`SELECT status, "maxInFlight" FROM "Run" WHERE id = $1`, [runId])
    const r = run[0] as { status: string; maxInFlight: number | null } | undefined
    let ids: string[] = []
    if (r?.status === 'running') {
      const { rows: flying } = await client.query(
        `SELECT DISTINCT data->>'sessionId' AS id FROM pgboss.job
         WHERE name = $1 AND state IN ('created', 'retry', 'active') AND data->>'runId' = $2
           AND ($3::uuid IS NULL OR id <> $3::uuid)`,
        [STEP_QUEUE, runId, opts.endingJob ?? null],
      )
      const room = r.maxInFlight == null ? null : Math.max(0, r.maxInFlight - flying.length)
      if (room !== 0) {
        const { rows } = await client.query(
          `SELECT id FROM "ProtocolSession" WHERE "runId" = $1 AND status = 'queued' AND NOT (id = ANY($2))
           ORDER BY repetition, position LIMIT $3`,
          [runId, flying.map((f) => (f as { id: string }).id), room],
        )
        ids = rows.map((x) => (x as { id: string }).id)
        await enqueueSteps(
          ids,
          runId,
          { executeSql: (text, values) => client.query(text, values) },
          { limited: r.maxInFlight != null },
        )
      }
    }
    if (own) {
      await client.query('COMMIT')
      if (ids.length) await wakeStepWorkers()
    }
    return ids.length
  } catch (err) {
    if (own) await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    own?.release()
  }
}

type PgQuery = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>
