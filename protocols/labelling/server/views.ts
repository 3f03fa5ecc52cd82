import { db, type ViewContext } from '@/lib/server/sdk'
import type { labelling } from '@/protocols/labelling/core'

/**
 * What a labelling session shows (exports: exports.ts). The session view is the item, the schema's
 * questions and guidelines, the viewer's own label once sent, and the run's progress; never a gold
 * label (gold stays in the dataset instance's prediction, which no snapshot carries) and never another
 * annotator's label (each label is its own session).
 */
export async function labellingSessionView(ctx: ViewContext<typeof labelling>) {
  const { schema, item, messages } = ctx.state
  const runId = ctx.session.runId
  const progress = runId
    ? await db.protocolSession.groupBy({ by: ['status'], where: { runId }, _count: { _all: true } }).then((rows) => {
        const total = rows.reduce((n, r) => n + r._count._all, 0)
        const done = rows.filter((r) => r.status === 'done').reduce((n, r) => n + r._count._all, 0)
        return { done, remaining: total - done, total }
      })
    : null
  return { item, schema, label: messages[0] ?? null, progress }
}
export type LabellingSessionView = Awaited<ReturnType<typeof labellingSessionView>>
