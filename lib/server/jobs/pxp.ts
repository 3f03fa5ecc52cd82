import type PgBoss from 'pg-boss'
import { db } from '@/lib/server/db'
import { jobSettings, queue } from '@/lib/server/jobs/queue'
import { stepEvinceSession } from '@/lib/server/runner/evince'
import { type StepResult, stepPxpSession } from '@/lib/server/runner/pxp'

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
): Promise<void> {
  if (!sessionIds.length) return
  const b = await queue(PXP_QUEUE)
  const { expireInSeconds } = jobSettings()
  await b.insert(
    sessionIds.map((sessionId) => ({
      name: PXP_QUEUE,
      data: (protocol === 'pxp'
        ? { sessionId, experimentId }
        : { sessionId, experimentId, protocol }) satisfies PxpStepJob,
      expireInSeconds,
      retryLimit: 5,
      retryDelay: 1,
    })),
  )
}

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
  const s = await db.protocolSession.findUnique({
    where: { id: sessionId },
    select: {
      experimentId: true,
      repetition: true,
      position: true,
      experiment: { select: { status: true, carryOver: true } },
    },
  })
  if (!s?.experimentId || !s.experiment) return
  if (s.experiment.carryOver && s.experiment.status === 'running') {
    const next = await db.protocolSession.findFirst({
      where: {
        experimentId: s.experimentId,
        repetition: s.repetition,
        position: { gt: s.position },
        status: { not: 'done' },
      },
      orderBy: { position: 'asc' },
      select: { id: true, status: true },
    })
    if (next && next.status === 'running') await enqueueSteps([next.id], s.experimentId) // carry-over is PXP's
  }
  await closeIfFinished(s.experimentId)
}

export async function closeIfFinished(experimentId: string): Promise<boolean> {
  const open = await db.protocolSession.count({ where: { experimentId, status: { not: 'done' } } })
  if (open) return false
  await db.experiment.updateMany({ where: { id: experimentId, status: 'running' }, data: { status: 'done' } })
  return true
}

const isRunning = async (experimentId: string | null) =>
  !experimentId ||
  (await db.$queryRaw<Array<{ status: string }>>`SELECT status FROM "Experiment" WHERE id = ${experimentId}`)[0]
    ?.status === 'running'

/**
 * One job: advance one session step by step (each step one message) until it needs a person, stalls,
 * ends, or the job has used half its expiry; then enqueue what comes next. The experiment's status
 * is read before every step, so a pause holds within one message. A step that loses the race for
 * its message (`conflict`: a duplicate job left by a crash) ends this job, so duplicates die out.
 */
export async function handlePxpStep(job: PxpStepJob, hooks: { onStep?: (r: StepResult) => void } = {}) {
  const stepSession = steppers[job.protocol ?? 'pxp']
  const budgetMs = (jobSettings().expireInSeconds * 1000) / 2
  const started = Date.now()
  for (;;) {
    if (!(await isRunning(job.experimentId))) return
    let r: StepResult
    try {
      r = (await stepSession(job.sessionId)) as StepResult
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
  }
  return {
    async stop() {
      for (const id of ids) await b.offWork({ id })
    },
  }
}
