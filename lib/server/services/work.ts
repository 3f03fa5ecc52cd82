import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { db } from '@/lib/server/db'
import { badRequest, conflict, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { id, requireStudyAccess, studiesWhere } from '@/lib/server/services/studies'

export const WORK_STATUSES = ['open', 'in_progress', 'done'] as const
const status = z.enum(WORK_STATUSES)

const workSelect = {
  id: true,
  kind: true,
  title: true,
  instructions: true,
  status: true,
  createdAt: true,
  updatedAt: true,
  userId: true,
  study: { select: { id: true, name: true, guidelines: true } },
  user: { select: { id: true, name: true, email: true } },
} as const

/**
 * The work an actor may open: their own; with work:read-study also everything in the studies they
 * may read (their study role, not only their account, decides). Anything else is not found.
 */
function visibleWork(actor: Actor) {
  const own = { userId: actor.userId }
  return hasScope(actor.role, 'work:read-study') ? { OR: [own, { study: studiesWhere(actor, 'read') }] } : own
}

export const listMyWork = defineOperation({
  name: 'work.list-mine',
  scope: 'work:read-own',
  input: z.object({ ...pageInput, status: status.optional() }),
  async run(actor, { page, pageSize, status: s }) {
    const where = { userId: actor.userId, ...(s ? { status: s } : {}), study: { archivedAt: null } }
    const [items, total] = await Promise.all([
      db.assignment.findMany({
        where,
        select: workSelect,
        orderBy: [{ status: 'desc' }, { createdAt: 'asc' }],
        ...skipTake(page, pageSize),
      }),
      db.assignment.count({ where }),
    ])
    return pageOf(items, total, page, pageSize)
  },
})

export const listStudyWork = defineOperation({
  name: 'work.list-study',
  scope: 'work:read-study',
  input: z.object({ ...pageInput, studyId: id }),
  async run(actor, { page, pageSize, studyId }) {
    await requireStudyAccess(db, actor, studyId, 'read')
    const where = { studyId }
    const [items, total] = await Promise.all([
      db.assignment.findMany({ where, select: workSelect, orderBy: { createdAt: 'asc' }, ...skipTake(page, pageSize) }),
      db.assignment.count({ where }),
    ])
    return pageOf(items, total, page, pageSize)
  },
})

export const getWork = defineOperation({
  name: 'work.get',
  scope: 'work:read-own',
  input: z.object({ workId: id }),
  async run(actor, { workId }) {
    const work = await db.assignment.findFirst({ where: { id: workId, ...visibleWork(actor) }, select: workSelect })
    if (!work) throw notFound('Work item')
    return work
  },
})

export const completeWork = defineOperation({
  name: 'work.complete',
  scope: 'work:submit',
  input: z.object({ workId: id }),
  async run(actor, { workId }) {
    return db.$transaction(async (tx) => {
      // Only the assignee completes their own work; others get "not found", as when opening it.
      const before = await tx.assignment.findFirst({ where: { id: workId, userId: actor.userId } })
      if (!before) throw notFound('Work item')
      if (before.status === 'done') throw conflict('This work is already marked done.')
      const after = await tx.assignment.update({ where: { id: workId }, data: { status: 'done' }, select: workSelect })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'work.complete',
        resourceType: 'assignment',
        resourceId: workId,
        studyId: before.studyId,
        before: { status: before.status },
        after: { status: after.status },
      })
      return after
    })
  },
})

export const assignWork = defineOperation({
  name: 'work.assign',
  scope: 'work:assign',
  input: z.object({
    studyId: id,
    userId: id,
    kind: z.string().trim().min(1).max(50).default('review'),
    title: z.string({ error: 'Give the work a title.' }).trim().min(1, 'Give the work a title.').max(200),
    instructions: z.string().trim().max(10_000).default(''),
  }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      await requireStudyAccess(tx, actor, input.studyId, 'write')
      const member = await tx.studyMember.findUnique({
        where: { studyId_userId: { studyId: input.studyId, userId: input.userId } },
      })
      if (!member) throw badRequest('Work can only be assigned to members of the study.')
      const work = await tx.assignment.create({ data: input, select: workSelect })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'work.assign',
        resourceType: 'assignment',
        resourceId: work.id,
        studyId: input.studyId,
        after: input,
      })
      return work
    })
  },
})
