import { z } from 'zod'
import { canonicalLabel } from '@/protocols/evince/core/metrics'
import {
  actorRef,
  badRequest,
  db,
  defineOperation,
  id,
  notFound,
  requireStudyAccess,
  writeAudit,
} from '@/lib/server/sdk'
import { analysisOf } from '@/protocols/evince/server/analysis'

/**
 * Label merges for a debate run's results (accuracy, confusion): "Obstructive Jaundice" counted as
 * "Jaundice", say. They change how finished debates are scored, never the debates themselves (the
 * stop rule ran with the aliases set up front), so they can be changed at any time.
 */
export const mergeDebateLabels = defineOperation({
  name: 'debates.merge-labels',
  scope: 'studies:update',
  input: z.union([
    z.object({
      runId: id,
      from: z.string().trim().min(1, 'Name the label to merge.').max(200),
      into: z.string().trim().min(1, 'Name the label to merge it into.').max(200),
    }),
    z.object({ runId: id, clear: z.literal(true) }),
  ]),
  async run(actor, input) {
    const e = await db.run.findFirst({ where: { id: input.runId, protocol: 'evince' } })
    if (!e) throw notFound('Debate')
    await requireStudyAccess(db, actor, e.studyId, 'write')
    const before = analysisOf(e.analysis)
    const merges = 'clear' in input ? {} : { ...before.merges, [input.from]: input.into }
    if ('from' in input && canonicalLabel(input.from) === canonicalLabel(input.into, merges))
      throw badRequest('A label cannot be merged into itself.', { into: ['Choose another label.'] })
    await db.$transaction(async (tx) => {
      await tx.run.update({ where: { id: e.id }, data: { analysis: { ...before, merges } } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'debate.merge-labels',
        resourceType: 'run',
        resourceId: e.id,
        studyId: e.studyId,
        before: { merges: before.merges },
        after: { merges },
      })
    })
    return { runId: e.id, merges }
  },
})
