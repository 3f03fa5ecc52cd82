import type PgBoss from 'pg-boss'
import { sql } from '@/lib/server/db'
import { isDatabaseUnavailable } from '@/lib/server/errors'
import { type Loaded, markStalled, type StepResult, stepSession } from '@/lib/server/engine/runner'
import { admitSessions, enqueueSteps, STEP_QUEUE, type StepJob } from '@/lib/server/engine/step-queue'
import { addLocalWorker, jobSettings, queue, removeLocalWorker } from '@/lib/server/jobs/queue'
import { log } from '@/lib/server/log'
import { isDraining, jobFinished, jobStarted, worksQueue } from '@/lib/server/processes'

/**
 * Sessions on the job queue, for every protocol: queue `session-step`, one job per session. A job
 * advances its session message by message until it needs a person, stalls or ends, or has used its
 * quantum (`PARLEY_JOB_SLICE_MS`) while another step waits, and then puts the session at the back of the
 * queue, so sessions share the workers round robin. The job carries no protocol: the session row says which. A crash
 * costs at most the message in flight; the (session, seq) key makes a re-run harmless (two jobs
 * racing for one message yield one message, and the loser's job ends), so duplicates die out.
 */

/**
 * Which sessions a worker is stepping right now (an active job): "running" is read off the queue
 * rather than written on the session, so the hot path pays no extra commit for it.
 */
export async function workingSessions(where: {
  runIds?: string[]
  sessionId?: string
}): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>()
  try {
    const { rows } = await sql().query<{ sessionId: string; runId: string | null }>(
      `SELECT DISTINCT data->>'sessionId' AS "sessionId", data->>'runId' AS "runId" FROM pgboss.job
       WHERE name = $1 AND state = 'active'
         AND ($2::text[] IS NULL OR data->>'runId' = ANY($2)) AND ($3::text IS NULL OR data->>'sessionId' = $3)`,
      [STEP_QUEUE, where.runIds ?? null, where.sessionId ?? null],
    )
    for (const r of rows) {
      const key = r.runId ?? ''
      if (!out.has(key)) out.set(key, new Set())
      out.get(key)?.add(r.sessionId)
    }
  } catch {
    // The queue's schema does not exist yet: nothing runs.
  }
  return out
}

/**
 * Whether a step job is waiting for a worker (any run's, a person's or a batch's): what decides if a
 * job whose quantum ended hands its session back or goes on. The fetch index
 * (`pgboss.parley_job_fetch`, on waiting jobs by name) makes it one index probe.
 */
export async function stepsWaiting(): Promise<boolean> {
  const { rows } = await sql().query<{ waiting: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = $1 AND state < 'active' AND start_after < now()) AS waiting`,
    [STEP_QUEUE],
  )
  return rows[0]?.waiting ?? true
}

/**
 * One job: advance one session step by step until it needs a person, stalls, ends, or the job has
 * used its quantum; then enqueue it again at the back of the queue. Every step reads the run's status
 * with the session (or from its last append) and does nothing unless the run is running, so a pause
 * holds within one message.
 */
export async function handleStep(
  job: StepJob,
  /** `jobId`: the queue's id of this job, which does not count itself when it lets the next session in. */
  hooks: { onStep?: (r: StepResult) => void; jobId?: string } = {},
): Promise<void> {
  const admit = { onlyIfLimited: true, limited: job.limited, endingJob: hooks.jobId }
  const { expireInSeconds, sliceMs } = jobSettings()
  const budgetMs = Math.min((expireInSeconds * 1000) / 2, sliceMs)
  const started = Date.now()
  let quantumStart = started
  // However long nothing else waits, a job hands back within half its expiry.
  const maxHoldMs = (expireInSeconds * 1000) / 2 - budgetMs
  let loaded: Loaded | undefined
  for (;;) {
    let r: StepResult
    try {
      r = await stepSession(job.sessionId, loaded ? { onlyIfRunning: true, loaded } : { onlyIfRunning: true })
    } catch (err) {
      // The database away (refused, cut, restarting): nothing is wrong with the session. The job
      // fails, so the queue retries it once the database is back (or, when even that cannot be
      // recorded, the heartbeats hand it back, processes.ts); the session never stalls for it.
      if (isDatabaseUnavailable(err)) {
        log().warn(
          { err, sessionId: job.sessionId },
          'step interrupted: the database is unreachable; it will be retried',
        )
        throw err
      }
      // Not an LLM failure (those stall inside the step): record it and leave the session resumable.
      log().error({ err, sessionId: job.sessionId }, 'step failed')
      await markStalled(
        { id: job.sessionId, runId: job.runId, status: 'running' },
        `internal: ${(err as Error).message}`,
      ).catch(() => {})
      if (job.runId) await admitSessions(job.runId, admit).catch(() => {})
      return
    }
    hooks.onStep?.(r)
    if (r.kind !== 'appended' || r.done) {
      // The session left the queue (done, awaiting a person, stalled, paused): a run with a limit of
      // sessions in flight lets its next waiting session in.
      if (job.runId) await admitSessions(job.runId, admit)
      return
    }
    loaded = r.next
    // Past the quantum, or this process is shutting down: hand the session back after this step;
    // but when no other step is waiting for a worker (and the job is young enough), going on is
    // the same order at the cost of one read instead of a job sent, fetched and completed and the
    // session loaded again.
    if (Date.now() - quantumStart > budgetMs || isDraining()) {
      if (!isDraining() && Date.now() - started < maxHoldMs && !(await stepsWaiting().catch(() => true))) {
        quantumStart = Date.now()
        continue
      }
      // Back of the queue, unless the run stopped meanwhile (as of this job's last append).
      if (!job.runId || r.next.session.runStatus === 'running')
        await enqueueSteps([job.sessionId], job.runId, undefined, {
          interactive: job.interactive,
          limited: job.limited,
        })
      return
    }
  }
}

export interface Workers {
  /** Take no new jobs; resolves when the jobs in flight have handed their sessions back. */
  stop(): Promise<void>
}

/** Wait until none of `running` is left (the handlers hand back after their current step). */
export async function drained(running: Set<string>): Promise<void> {
  while (running.size) await new Promise((r) => setTimeout(r, 25))
}

/** Work the step queue in this process with `count` concurrent steps. */
export async function startWorkers(count = jobSettings().workers): Promise<Workers> {
  const b: PgBoss = await queue(STEP_QUEUE)
  const ids: string[] = []
  const running = new Set<string>()
  const work = async (i: number) => {
    worksQueue(STEP_QUEUE)
    const id = await b.work<StepJob>(STEP_QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async (jobs) => {
      try {
        for (const job of jobs) {
          running.add(job.id)
          jobStarted(STEP_QUEUE, job.id)
          try {
            await handleStep(
              {
                sessionId: job.data.sessionId,
                runId: job.data.runId ?? null,
                interactive: job.data.interactive,
                limited: job.data.limited,
              },
              { jobId: job.id },
            )
          } finally {
            running.delete(job.id)
            jobFinished(job.id)
          }
        }
      } finally {
        // pg-boss 10 sleeps a polling interval after every fetch unless told there is more work.
        const me = ids[i]
        if (me && !isDraining()) b.notifyWorker(me)
      }
    })
    ids[i] = id
    addLocalWorker(STEP_QUEUE, id)
  }
  for (let i = 0; i < count; i++) await work(i)
  return {
    async stop() {
      for (const id of ids) {
        removeLocalWorker(STEP_QUEUE, id)
        await b.offWork({ id })
      }
      await drained(running)
    },
  }
}
