import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { conflict, notFound } from '@/lib/server/errors'
import type PgBoss from 'pg-boss'
import { closeIfFinished, enqueueSteps, runnableHeads, wakeStepWorkers } from '@/lib/server/jobs/pxp'
import { publish } from '@/lib/server/live'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/**
 * Running an experiment on the job queue: start, pause, resume, cancel, and Retry of a stalled
 * session. Status moves are conditional updates (`where status in …`), so two researchers pressing
 * buttons at once cannot both win; the queue work happens after the status row is written, and
 * workers re-read the status before every step, so a paused or cancelled run stops within one step.
 */

/** An experiment the actor may run (write access to its study), else 404 / 403. */
async function findExperiment(actor: Actor, experimentId: string) {
  const e = await db.experiment.findUnique({ where: { id: experimentId } })
  if (!e) throw notFound('Experiment')
  await requireStudyAccess(db, actor, e.studyId, 'write')
  return e
}

async function move(
  actor: Actor,
  experimentId: string,
  from: string[],
  to: string,
  action: string,
  refusal: (status: string) => string,
) {
  const e = await findExperiment(actor, experimentId)
  const moved = await db.$transaction(async (tx) => {
    const r = await tx.experiment.updateMany({ where: { id: e.id, status: { in: from } }, data: { status: to } })
    if (r.count !== 1) return false
    await writeAudit(tx, {
      actor: actorRef(actor),
      action,
      resourceType: 'experiment',
      resourceId: e.id,
      studyId: e.studyId,
      before: { status: e.status },
      after: { status: to },
    })
    return true
  })
  if (moved) await publish(`experiment:${e.id}`, { type: 'progress' })
  if (!moved) {
    const now = await db.experiment.findUniqueOrThrow({ where: { id: e.id }, select: { status: true } })
    throw conflict(refusal(now.status))
  }
  return e
}

const ExperimentRef = z.object({ experimentId: id })

const protocolOf = (p: string) => (p === 'evince' ? 'evince' : 'pxp')

/**
 * Put a running experiment's runnable sessions on the queue (and close it if nothing is left). With
 * `tx`, the jobs are inserted in the caller's transaction (which then wakes the workers and closes
 * the run after its commit, see `afterEnqueueRun`).
 */
export async function enqueueRun(experimentId: string, tx?: PgBoss.Db): Promise<number> {
  const e = await db.experiment.findUniqueOrThrow({ where: { id: experimentId }, select: { protocol: true } })
  const heads = await runnableHeads(experimentId)
  await enqueueSteps(heads, experimentId, protocolOf(e.protocol), tx)
  if (!tx) await afterEnqueueRun(experimentId)
  return heads.length
}

export async function afterEnqueueRun(experimentId: string): Promise<void> {
  await wakeStepWorkers()
  await closeIfFinished(experimentId)
}

export const startExperiment = defineOperation({
  name: 'experiments.start',
  scope: 'studies:update',
  input: ExperimentRef,
  async run(actor, { experimentId }) {
    await move(actor, experimentId, ['draft'], 'running', 'experiment.start', (s) =>
      s === 'paused'
        ? 'The experiment is paused: resume it instead.'
        : s === 'preparing'
          ? 'The experiment is still creating its sessions; it can start once they are all there.'
          : `The experiment is already ${s}.`,
    )
    return { experimentId, enqueued: await enqueueRun(experimentId) }
  },
})

export const pauseExperiment = defineOperation({
  name: 'experiments.pause',
  scope: 'studies:update',
  input: ExperimentRef,
  async run(actor, { experimentId }) {
    await move(
      actor,
      experimentId,
      ['running'],
      'paused',
      'experiment.pause',
      (s) => `Only a running experiment can be paused; this one is ${s}.`,
    )
    return { experimentId, status: 'paused' as const }
  },
})

export const resumeExperiment = defineOperation({
  name: 'experiments.resume',
  scope: 'studies:update',
  input: ExperimentRef,
  async run(actor, { experimentId }) {
    const e = await move(
      actor,
      experimentId,
      ['paused'],
      'running',
      'experiment.resume',
      (s) => `Only a paused experiment can be resumed; this one is ${s}.`,
    )
    const heads = await runnableHeads(experimentId)
    await enqueueSteps(heads, experimentId, protocolOf(e.protocol))
    await closeIfFinished(experimentId)
    return { experimentId, enqueued: heads.length }
  },
})

export const cancelExperiment = defineOperation({
  name: 'experiments.cancel',
  scope: 'studies:update',
  input: ExperimentRef,
  async run(actor, { experimentId }) {
    await move(
      actor,
      experimentId,
      ['preparing', 'draft', 'running', 'paused'],
      'cancelled',
      'experiment.cancel',
      (s) => `The experiment is already ${s}.`,
    )
    // Drop its queued steps (a step already running finishes its one message, then sees the status).
    const dropped = await db.$executeRaw`
      DELETE FROM pgboss.job
      WHERE name = 'pxp-step' AND state IN ('created', 'retry') AND data->>'experimentId' = ${experimentId}`.catch(
      () => 0, // the queue schema does not exist yet: nothing was ever queued
    )
    return { experimentId, status: 'cancelled' as const, droppedJobs: dropped }
  },
})

export const retrySession = defineOperation({
  name: 'experiments.retry-session',
  scope: 'studies:update',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const s = await db.protocolSession.findUnique({
      where: { id: sessionId },
      select: {
        id: true,
        studyId: true,
        experimentId: true,
        stallError: true,
        protocol: true,
        experiment: { select: { status: true } },
      },
    })
    if (!s) throw notFound('Session')
    await requireStudyAccess(db, actor, s.studyId, 'write')
    const moved = await db.$transaction(async (tx) => {
      const r = await tx.protocolSession.updateMany({
        where: { id: s.id, status: 'stalled' },
        data: { status: 'running', stallError: null },
      })
      if (r.count !== 1) return false
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'session.retry',
        resourceType: 'session',
        resourceId: s.id,
        studyId: s.studyId,
        before: { status: 'stalled', error: s.stallError },
        after: { status: 'running' },
      })
      return true
    })
    if (!moved) throw conflict('Only a stalled session can be retried; this one has moved on.')
    // A paused run picks the session up on resume; a finished or cancelled one is not restarted.
    const run = !s.experimentId || s.experiment?.status === 'running'
    if (run) await enqueueSteps([s.id], s.experimentId, protocolOf(s.protocol))
    return { sessionId: s.id, enqueued: run }
  },
})
