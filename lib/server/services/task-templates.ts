import { z } from 'zod'
import type { Prisma } from '@/lib/generated/prisma/client'
import { MatchSpec, matchGeneric, TaskTemplate } from '@/lib/tasks/generic'
import { db } from '@/lib/server/db'
import { notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/** Generic PXP task templates of a study (immutable: a change is a new template). */

export const createTaskTemplate = defineOperation({
  name: 'task-templates.create',
  scope: 'studies:update',
  input: TaskTemplate.extend({ studyId: id }),
  async run(actor, { studyId, ...spec }) {
    await requireStudyAccess(db, actor, studyId, 'write')
    return db.$transaction(async (tx) => {
      const t = await tx.taskTemplate.create({
        data: { studyId, name: spec.name, spec: spec as Prisma.InputJsonValue, createdById: actor.userId || null },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'task-template.create',
        resourceType: 'task-template',
        resourceId: t.id,
        studyId,
        after: spec,
      })
      return { id: t.id, name: t.name }
    })
  },
})

export const listTaskTemplates = defineOperation({
  name: 'task-templates.list',
  scope: 'studies:read',
  input: z.object({ studyId: id }),
  async run(actor, { studyId }) {
    await requireStudyAccess(db, actor, studyId, 'read')
    return db.taskTemplate.findMany({
      where: { studyId },
      orderBy: { createdAt: 'desc' },
      select: { id: true, name: true, createdAt: true, spec: true },
    })
  },
})

export const getTaskTemplate = defineOperation({
  name: 'task-templates.get',
  scope: 'studies:read',
  input: z.object({ templateId: id }),
  async run(actor, { templateId }) {
    const t = await db.taskTemplate.findUnique({
      where: { id: templateId },
      include: { study: { select: { id: true, name: true } } },
    })
    if (!t) throw notFound('Template')
    await requireStudyAccess(db, actor, t.studyId, 'read')
    return { ...t, spec: TaskTemplate.parse(t.spec) }
  },
})

/** "Try MATCH": does the template's MATCH accept these two predictions? (Nothing is stored.) */
export const tryMatch = defineOperation({
  name: 'task-templates.try-match',
  scope: 'studies:update',
  input: z.object({ match: MatchSpec, a: z.string().max(10_000), b: z.string().max(10_000) }),
  async run(_actor, { match, a, b }) {
    return { match: matchGeneric(match)(a, b) }
  },
})
