import { z } from 'zod'
import { MatchSpec, matchGeneric, TaskTemplate } from '@/lib/tasks/generic'
import { SandboxError } from '@/lib/tasks/sandbox'
import {
  type Actor,
  AppError,
  actorRef,
  db,
  defineOperation,
  enforceRate,
  hasScope,
  id,
  notFound,
  type Prisma,
  requireStudyAccess,
  settings,
  writeAudit,
} from '@/lib/server/sdk'

/**
 * PXP's task templates of a study: a generic PXP task (prompts, output fields, labels, MATCH and AGREE)
 * for generic datasets, immutable (a change is a new template). Their operations are PXP's own (its
 * `ops` capability); the study page shows them in PXP's study panel and under /studies/{id}/p/pxp/.
 */

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

/** PXP's card on a study page: its task templates (newest first) and whether the actor may add one. */
export async function templatesPanel(actor: Actor, studyId: string) {
  const templates = await db.taskTemplate.findMany({
    where: { studyId },
    orderBy: { createdAt: 'desc' },
    select: { id: true, name: true, createdAt: true },
  })
  return { templates, canWrite: await canWrite(actor, studyId) }
}

/** May the actor add templates (its callers have checked read access already)? */
async function canWrite(actor: Actor, studyId: string) {
  if (!hasScope(actor.role, 'studies:update')) return false
  return (await requireStudyAccess(db, actor, studyId, 'read')).access.includes('write')
}

/**
 * PXP's pages under a study: `templates/new` (the form; for those who may write) and
 * `templates/{id}` (a template of this study). Anything else is no page (null).
 */
export async function templatePage(actor: Actor, studyId: string, path: string[]) {
  if (path[0] !== 'templates' || path.length !== 2) return null
  if (path[1] === 'new') {
    if (!(await canWrite(actor, studyId))) throw new AppError(403, 'You may not add templates to this study.')
    return { title: 'New task template', data: { page: 'new' as const } }
  }
  const t = await db.taskTemplate.findFirst({
    where: { id: path[1], studyId },
    select: { id: true, name: true, createdAt: true, spec: true },
  })
  if (!t) return null
  return { title: t.name, data: { page: 'template' as const, template: { ...t, spec: TaskTemplate.parse(t.spec) } } }
}

/** The study's templates as the set-up form offers them. */
export async function templateChoices(studyId: string) {
  const templates = await db.taskTemplate.findMany({
    where: { studyId },
    orderBy: { createdAt: 'desc' },
    select: { id: true, name: true },
  })
  return { templates: templates.map((t) => ({ value: t.id, label: t.name })) }
}
