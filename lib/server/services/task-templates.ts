import { z } from 'zod'
import type { Prisma } from '@/lib/generated/prisma/client'
import { MatchSpec, matchGeneric, TaskTemplate } from '@/lib/tasks/generic'
import { SandboxError } from '@/lib/tasks/sandbox'
import { db } from '@/lib/server/db'
import { settings } from '@/lib/server/config'
import { AppError, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { enforceRate } from '@/lib/server/rate-limit'
import { actorRef, writeAudit } from '@/lib/server/audit'
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

const tryText = z.string().max(10_000, 'Try MATCH takes up to 10,000 characters per prediction.')

/**
 * "Try MATCH": does the template's MATCH accept these two predictions? (Nothing is stored.) Regex
 * MATCH runs in the regex worker with its time limit; a pattern that runs out of time on these texts
 * is refused with a 422 saying so. Limited per person (PARLEY_TRY_MATCH_PER_MINUTE).
 */
export const tryMatch = defineOperation({
  name: 'task-templates.try-match',
  scope: 'studies:update',
  input: z.object({ match: MatchSpec, a: tryText, b: tryText }),
  async run(actor, { match, a, b }) {
    await enforceRate(actor, 'task-templates.try-match', settings(['PARLEY_TRY_MATCH_PER_MINUTE']).tryMatchPerMinute)
    try {
      return { match: await matchGeneric(match)(a, b) }
    } catch (err) {
      if (err instanceof SandboxError && (err.kind === 'timeout' || err.kind === 'crashed'))
        throw new AppError(
          422,
          `${err.message} Simplify the pattern (large repetition counts such as {1,1000} make it slow) or shorten the texts.`,
        )
      throw err
    }
  },
})
