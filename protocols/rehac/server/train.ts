import { z } from 'zod'
import {
  badRequest,
  db,
  defineOperation,
  id,
  type PluginEndpoint,
  requireStudyAccess,
  writeAudit,
  actorRef,
} from '@/lib/server/sdk'
import { TrainDataError, trainOnTrajectories, trainSettings, trainSummary } from '@/protocols/rehac/core/train'
import { episodes } from '@/protocols/rehac/server/views'

/**
 * Training a collaboration policy in the app (issue 24): the study's ended ReHAC episodes (of the
 * named runs, or of every ReHAC run of the study) → core/train.ts (offline-RL rows at λ, whole
 * questions held out by seed, trainPolicy, the offline estimate on the held-out trees). Nothing is
 * stored but the audit entry: the answer holds the model, to paste as a `trained-policy` decider's
 * model, and the figures.
 */
export const trainRehacPolicy = defineOperation({
  name: 'rehac.train',
  scope: 'exports:read',
  input: trainSettings.extend({
    studyId: id,
    runIds: z.array(id).min(1).max(100, 'At most 100 runs.').optional(),
  }),
  async run(actor, { studyId, runIds, ...settings }) {
    // Training reads every trajectory of the study: researcher work, like its exports.
    await requireStudyAccess(db, actor, studyId, 'write')
    const runs = await db.run.findMany({
      where: { studyId, protocol: 'rehac', ...(runIds ? { id: { in: runIds } } : {}) },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    })
    if (runIds && runs.length !== new Set(runIds).size)
      throw badRequest('Some of these runs are not ReHAC runs of this study.', {
        runIds: ['Choose ReHAC runs of this study.'],
      })
    const lines: { trajectory: string; f1: number }[] = []
    for (const r of runs)
      for (const e of await episodes(r.id))
        if (e.result && e.trajectory !== null) lines.push({ trajectory: e.trajectory, f1: e.result.f1 })
    if (lines.length === 0) throw badRequest('No ReHAC episode of this study has ended yet: nothing to train on.')
    let report: ReturnType<typeof trainOnTrajectories>
    try {
      report = trainOnTrajectories(lines, settings)
    } catch (err) {
      if (err instanceof TrainDataError) throw badRequest(err.message)
      throw err
    }
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'rehac.train',
      resourceType: 'study',
      resourceId: studyId,
      studyId,
      after: { runs: runs.map((r) => r.id), ...settings, trajectories: lines.length },
    })
    return { model: report.model, summary: trainSummary(report) }
  },
})

const evaluation = z.object({
  meanChosenAdvantage: z.number(),
  stateAccuracy: z.number(),
  humanRate: z.number(),
  states: z.number(),
})

/** POST /rehac/policies/train: the same as the operation, JSON in and out. */
export const rehacRest: PluginEndpoint[] = [
  {
    method: 'POST',
    path: '/rehac/policies/train',
    summary:
      "Train a ReHAC collaboration policy on a study's ended episodes (`studyId`, optional `runIds`, `lambda`, `epochs`, `seed`, `heldOutFraction`): whole questions held out by seed; answers the model (paste as a trained-policy decider's model) and the offline estimate on the held-out trees. Stores nothing",
    op: trainRehacPolicy,
    source: 'body',
    output: z.object({
      model: z.object({ kind: z.literal('rehac-logistic') }).loose(),
      summary: z
        .object({
          trajectories: z.number(),
          rows: z.number(),
          train: evaluation,
          heldOut: z.object({ policy: evaluation, agentOnly: evaluation, humanOnly: evaluation }).nullable(),
        })
        .loose(),
    }),
    errors: { 404: 'No such study, or not visible to you' },
  },
]
