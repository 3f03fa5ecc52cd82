import { z } from 'zod'
import { db } from '@/lib/server/db'
import { defineOperation } from '@/lib/server/operation'
import { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'

type Named = { id: string; name: string }
type Lookup = (ids: string[]) => Promise<Named[]>

/** How the name of each kind of resource is found (kinds without a name show their id). */
const NAMES: Record<string, Lookup> = {
  user: (ids) => db.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  study: (ids) => db.study.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  run: (ids) => db.run.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  dataset: (ids) => db.dataset.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  connection: (ids) => db.llmConnection.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  preset: (ids) => db.modelPreset.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  'task-template': (ids) => db.taskTemplate.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
  apikey: (ids) => db.apiKey.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }),
}

/** Names of the people, studies and resources a page of entries mentions, looked up once per kind. */
async function namesFor(
  items: Array<{ actorUserId: string | null; studyId: string | null; resourceType: string; resourceId: string }>,
) {
  const wanted = new Map<string, Set<string>>()
  const want = (kind: string, id: string | null) => {
    if (!id || !NAMES[kind]) return
    const ids = wanted.get(kind) ?? new Set<string>()
    wanted.set(kind, ids.add(id))
  }
  for (const e of items) {
    want('user', e.actorUserId)
    want('study', e.studyId)
    want(e.resourceType, e.resourceId)
  }
  const found = new Map<string, string>()
  await Promise.all(
    [...wanted].map(async ([kind, ids]) => {
      for (const row of await (NAMES[kind] as Lookup)([...ids])) found.set(`${kind}:${row.id}`, row.name)
    }),
  )
  return (kind: string, id: string | null) => (id ? (found.get(`${kind}:${id}`) ?? null) : null)
}

/**
 * Entries that record activity rather than a change: signing in, a person's or program's turn in a
 * session (one per message, dozens per game), an export. The audit log page hides them by default
 * ("Changes only"); `changesOnly` leaves them out.
 */
export const ACTIVITY_ACTIONS = ['auth.sign-in', 'session.turn', 'run.export'] as const

export const listAudit = defineOperation({
  name: 'audit.list',
  scope: 'audit:read',
  input: z.object({
    ...pageInput,
    action: z.string().trim().max(100).optional(),
    actor: z.string().trim().max(254).optional(),
    resourceType: z.string().trim().max(50).optional(),
    resourceId: z.string().trim().max(100).optional(),
    /** Leave out sign-ins, turns and exports (ACTIVITY_ACTIONS). */
    changesOnly: boolParam.optional(),
  }),
  async run(_actor, { page, pageSize, action, actor, resourceType, resourceId, changesOnly }) {
    const where = {
      ...(action || changesOnly
        ? {
            action: {
              ...(action ? { startsWith: action } : {}),
              ...(changesOnly ? { notIn: [...ACTIVITY_ACTIONS] } : {}),
            },
          }
        : {}),
      ...(actor ? { actorEmail: { contains: actor, mode: 'insensitive' as const } } : {}),
      ...(resourceType ? { resourceType } : {}),
      ...(resourceId ? { resourceId } : {}),
    }
    const [rows, total, types] = await Promise.all([
      db.auditLog.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(page, pageSize) }),
      db.auditLog.count({ where }),
      db.auditLog.findMany({
        distinct: ['resourceType'],
        select: { resourceType: true },
        orderBy: { resourceType: 'asc' },
      }),
    ])
    const name = await namesFor(rows)
    const items = rows.map((e) => ({
      ...e,
      actorName: name('user', e.actorUserId),
      studyName: name('study', e.studyId),
      resourceName: name(e.resourceType, e.resourceId),
    }))
    return { ...pageOf(items, total, page, pageSize), resourceTypes: types.map((t) => t.resourceType) }
  },
})
