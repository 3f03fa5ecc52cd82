import type PgBoss from 'pg-boss'
import { db, sql } from '@/lib/server/db'
import { jobSettings, queue } from '@/lib/server/jobs/queue'
import { stepEvinceSession } from '@/lib/server/runner/evince'
import { type LoadedSession, type StepResult, stepPxpSession } from '@/lib/server/runner/pxp'

/**
 * PXP experiments on the job queue. A job advances one session message by message (each step
 * replays the log and lets the seat whose turn it is write exactly one message) until the session
 * needs a person, stalls or ends, or the job has used half its expiry, and then enqueues what comes
 * next: the same session, or with carry-over the next session of the repetition once this one is
 * done. A crash costs at most the message in flight; the (session, seq) key makes a re-run
 * harmless: two jobs racing for one message yield one message, and the loser (`conflict`) stops, so
 * duplicates left by a crash die out instead of multiplying.
 */
export const PXP_QUEUE = 'pxp-step'

export interface PxpStepJob {
  sessionId: string
  experimentId: string | null
  /** Which runner steps the session (EVINCE debates share the queue); absent = PXP. */
  protocol?: 'pxp' | 'evince'
}

/** The runner of each protocol: one step = one message. */
const steppers = { pxp: stepPxpSession, evince: stepEvinceSession } as const

export async function enqueueSteps(
  sessionIds: readonly string[],
  experimentId: string | null,
  protocol: 'pxp' | 'evince' = 'pxp',
  /** Insert through this connection (inside the caller's transaction); then call wakeStepWorkers after its commit. */
  db?: PgBoss.Db,
): Promise<void> {
  if (!sessionIds.length) return
  const b = await queue(PXP_QUEUE)
  const { expireInSeconds } = jobSettings()
  const jobs = sessionIds.map((sessionId) => ({
    name: PXP_QUEUE,
    data: (protocol === 'pxp'
      ? { sessionId, experimentId }
      : { sessionId, experimentId, protocol }) satisfies PxpStepJob,
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
export async function wakeStepWorkers(): Promise<void> {
  if (!localWorkers.size) return
  const b = await queue(PXP_QUEUE)
  for (const id of localWorkers) b.notifyWorker(id)
}

/** The ids of the workers running in this process (see startPxpWorkers). */
const localWorkers = new Set<string>()

/**
 * The sessions an experiment's run (re)starts from: with carry-over, the first unfinished session of
 * each repetition (the rest follow in order); otherwise every unfinished one. Sessions waiting for
 * a person or stalled are not enqueued: a submission or a Retry moves them.
 */
export async function runnableHeads(experimentId: string): Promise<string[]> {
  const experiment = await db.experiment.findUniqueOrThrow({ where: { id: experimentId } })
  const open = await db.protocolSession.findMany({
    where: { experimentId, status: { not: 'done' } },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
    select: { id: true, repetition: true, status: true },
  })
  const heads = experiment.carryOver ? open.filter((s, i) => i === 0 || open[i - 1]?.repetition !== s.repetition) : open
  return heads.filter((s) => s.status === 'running').map((s) => s.id)
}

/** After a session ends: continue its carry-over chain, and close the experiment when all are done. */
export async function afterSessionDone(sessionId: string): Promise<void> {
  // Plain statements: this runs once per session on the hot path of a run.
  const { rows } = await sql().query<{
    experimentId: string | null
    status: string | null
    carryOver: boolean | null
    next: string | null
    nextStatus: string | null
  }>(
    `SELECT s."experimentId", e.status, e."carryOver", n.id AS next, n.status AS "nextStatus"
     FROM "ProtocolSession" s
     LEFT JOIN "Experiment" e ON e.id = s."experimentId"
     LEFT JOIN LATERAL (
       SELECT id, status FROM "ProtocolSession" x
       WHERE e."carryOver" AND x."experimentId" = s."experimentId" AND x.repetition = s.repetition
         AND x.position > s.position AND x.status <> 'done'
       ORDER BY x.position LIMIT 1
     ) n ON true
     WHERE s.id = $1`,
    [sessionId],
  )
  const s = rows[0]
  if (!s?.experimentId) return
  if (s.carryOver && s.status === 'running' && s.next && s.nextStatus === 'running')
    await enqueueSteps([s.next], s.experimentId) // carry-over is PXP's
  await closeIfFinished(s.experimentId)
}

/** Mark a running experiment done when none of its sessions is open (one statement). */
export async function closeIfFinished(experimentId: string): Promise<boolean> {
  const { rows } = await sql().query<{ open: boolean }>(
    `WITH o AS (SELECT EXISTS (SELECT 1 FROM "ProtocolSession" WHERE "experimentId" = $1 AND status <> 'done') AS open),
          u AS (UPDATE "Experiment" SET status = 'done', "updatedAt" = now()
                WHERE id = $1 AND status = 'running' AND NOT (SELECT open FROM o) RETURNING id)
     SELECT open FROM o, (SELECT count(*) FROM u) c`,
    [experimentId],
  )
  return !rows[0]?.open
}

const isRunning = async (experimentId: string | null) =>
  !experimentId ||
  (await sql().query<{ status: string }>('SELECT status FROM "Experiment" WHERE id = $1', [experimentId])).rows[0]
    ?.status === 'running'

/**
 * One job: advance one session step by step (each step one message) until it needs a person, stalls,
 * ends, or the job has used its quantum (`sliceMs`); then enqueue what comes next (the session again,
 * at the back of the queue, so sessions take turns). Every step reads the experiment's status with
 * the session and does nothing unless it is running, so a pause holds within one message. A step
 * that loses the race for its message (`conflict`: a duplicate job left by a crash) ends this job, so
 * duplicates die out.
 */
export async function handlePxpStep(job: PxpStepJob, hooks: { onStep?: (r: StepResult) => void } = {}) {
  const stepSession = steppers[job.protocol ?? 'pxp']
  const { expireInSeconds, sliceMs } = jobSettings()
  const budgetMs = Math.min((expireInSeconds * 1000) / 2, sliceMs)
  const started = Date.now()
  let loaded: LoadedSession | undefined
  for (;;) {
    let r: StepResult
    try {
      r = (await stepSession(job.sessionId, { onlyIfRunning: true, loaded })) as StepResult
    } catch (err) {
      // Not an LLM failure (those stall inside the step): record it and leave the session resumable.
      const error = `internal: ${(err as Error).message}`.slice(0, 2000)
      await db.protocolSession.updateMany({
        where: { id: job.sessionId },
        data: { status: 'stalled', stallError: error },
      })
      console.error(`[parley] step of session ${job.sessionId} failed:`, err)
      return
    }
    hooks.onStep?.(r)
    if (r.kind === 'done') return afterSessionDone(job.sessionId)
    if (r.kind !== 'appended') return
    loaded = r.next
    if (Date.now() - started > budgetMs) {
      if (await isRunning(job.experimentId)) await enqueueSteps([job.sessionId], job.experimentId, job.protocol)
      return
    }
  }
}

export interface Workers {
  stop(): Promise<void>
}

/** Work the PXP queue in this process with `count` concurrent steps. */
export async function startPxpWorkers(count = jobSettings().workers): Promise<Workers> {
  const b: PgBoss = await queue(PXP_QUEUE)
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const id = await b.work<PxpStepJob>(PXP_QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async (jobs) => {
      try {
        for (const job of jobs) await handlePxpStep(job.data)
      } finally {
        // pg-boss 10 sleeps a polling interval after every fetch unless told there is more work.
        const me = ids[i]
        if (me) b.notifyWorker(me)
      }
    })
    ids.push(id)
    localWorkers.add(id)
  }
  return {
    async stop() {
      for (const id of ids) {
        localWorkers.delete(id)
        await b.offWork({ id })
      }
    },
  }
}
