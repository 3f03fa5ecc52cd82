import { z } from 'zod'
import { studyProtocolChoices } from '@/lib/protocols/registry'
import type { Actor } from '@/lib/server/actor'
import { hasScope, isRole, rank, type Role } from '@/lib/server/auth/roles'
import { db, type Tx } from '@/lib/server/db'
import { badRequest, conflict, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { email, role } from '@/lib/server/services/users'

/** Protocols a study can name (running ones and the planned next ones), with their labels. */
const CHOICES = studyProtocolChoices()
export const PROTOCOLS = CHOICES.map((c) => c.id) as [string, ...string[]]
export const PROTOCOL_LABELS: Record<string, string> = Object.fromEntries(CHOICES.map((c) => [c.id, c.label]))

export const id = z.string().trim().min(1, 'Missing id.').max(100)
const studyName = z.string({ error: 'Give the study a name.' }).trim().min(1, 'Give the study a name.').max(120)
const description = z.string().trim().max(5000).default('')
const guidelines = z.string().trim().max(50_000).default('')
const protocol = z
  .enum(PROTOCOLS, { message: `Protocol must be one of: ${PROTOCOLS.join(', ')}.` })
  .nullish()
  .transform((v) => v ?? null)

/** The studies an actor may see: all of them with studies:read-all, else those they belong to. */
export function visibleStudies(actor: Actor) {
  return hasScope(actor.role, 'studies:read-all') ? {} : { members: { some: { userId: actor.userId } } }
}

/** Load a study the actor can see, or 404 (never 403: existence is not leaked). */
export async function findVisibleStudy(client: Tx | typeof db, actor: Actor, studyId: string) {
  const study = await client.study.findFirst({ where: { id: studyId, ...visibleStudies(actor) } })
  if (!study) throw notFound('Study')
  return study
}

const studySummary = {
  id: true,
  name: true,
  description: true,
  protocol: true,
  createdAt: true,
  updatedAt: true,
  archivedAt: true,
  _count: { select: { members: true, assignments: true } },
} as const

export const listStudies = defineOperation({
  name: 'studies.list',
  scope: 'studies:read',
  input: z.object({
    ...pageInput,
    q: z.string().trim().max(200).optional(),
    archived: boolParam.default(false),
  }),
  async run(actor, { page, pageSize, q, archived }) {
    const where = {
      ...visibleStudies(actor),
      archivedAt: archived ? { not: null } : null,
      ...(q ? { name: { contains: q, mode: 'insensitive' as const } } : {}),
    }
    const [items, total] = await Promise.all([
      db.study.findMany({ where, select: studySummary, orderBy: { createdAt: 'desc' }, ...skipTake(page, pageSize) }),
      db.study.count({ where }),
    ])
    return pageOf(items, total, page, pageSize)
  },
})

export const getStudy = defineOperation({
  name: 'studies.get',
  scope: 'studies:read',
  input: z.object({ studyId: id }),
  async run(actor, { studyId }) {
    await findVisibleStudy(db, actor, studyId)
    return db.study.findUniqueOrThrow({
      where: { id: studyId },
      select: {
        ...studySummary,
        guidelines: true,
        createdBy: { select: { id: true, name: true, email: true } },
        members: {
          select: { role: true, addedAt: true, user: { select: { id: true, name: true, email: true, role: true } } },
          orderBy: { addedAt: 'asc' },
        },
      },
    })
  },
})

export const CreateStudyInput = z.object({ name: studyName, description, protocol, guidelines })

export const createStudy = defineOperation({
  name: 'studies.create',
  scope: 'studies:create',
  input: CreateStudyInput,
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      const study = await tx.study.create({
        data: {
          ...input,
          createdById: actor.userId,
          members: { create: { userId: actor.userId, role: actor.role } },
        },
        select: studySummary,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'study.create',
        resourceType: 'study',
        resourceId: study.id,
        studyId: study.id,
        after: input,
      })
      return study
    })
  },
})

export const updateStudy = defineOperation({
  name: 'studies.update',
  scope: 'studies:update',
  input: z.object({
    studyId: id,
    name: studyName.optional(),
    description: z.string().trim().max(5000).optional(),
    guidelines: z.string().trim().max(50_000).optional(),
    protocol: z.enum(PROTOCOLS).nullish(),
  }),
  async run(actor, { studyId, ...changes }) {
    return db.$transaction(async (tx) => {
      const before = await findVisibleStudy(tx, actor, studyId)
      const data = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined))
      const after = await tx.study.update({ where: { id: studyId }, data, select: studySummary })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'study.update',
        resourceType: 'study',
        resourceId: studyId,
        studyId,
        before: Object.fromEntries(Object.keys(data).map((k) => [k, before[k as keyof typeof before]])),
        after: data,
      })
      return after
    })
  },
})

export const archiveStudy = defineOperation({
  name: 'studies.archive',
  scope: 'studies:update',
  input: z.object({ studyId: id, archived: boolParam.default(true) }),
  async run(actor, { studyId, archived }) {
    return db.$transaction(async (tx) => {
      const before = await findVisibleStudy(tx, actor, studyId)
      const after = await tx.study.update({
        where: { id: studyId },
        data: { archivedAt: archived ? new Date() : null },
        select: studySummary,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: archived ? 'study.archive' : 'study.unarchive',
        resourceType: 'study',
        resourceId: studyId,
        studyId,
        before: { archivedAt: before.archivedAt },
        after: { archivedAt: after.archivedAt },
      })
      return after
    })
  },
})

export const addMember = defineOperation({
  name: 'studies.add-member',
  scope: 'studies:update',
  input: z.object({
    studyId: id,
    email,
    role: role.optional(),
  }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      await findVisibleStudy(tx, actor, input.studyId)
      const user = await tx.user.findUnique({ where: { email: input.email } })
      if (!user) throw badRequest(`No account has the email ${input.email}. An admin can create it.`)
      const accountRole: Role = isRole(user.role) ? user.role : 'viewer'
      const memberRole = input.role ?? accountRole
      if (rank(memberRole) > rank(accountRole)) {
        throw badRequest(`${user.email} is a ${accountRole}; a study role cannot grant more than the account role.`)
      }
      const exists = await tx.studyMember.findUnique({
        where: { studyId_userId: { studyId: input.studyId, userId: user.id } },
      })
      if (exists) throw conflict(`${user.email} is already a member of this study.`)
      const member = await tx.studyMember.create({
        data: { studyId: input.studyId, userId: user.id, role: memberRole },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'study.add-member',
        resourceType: 'study',
        resourceId: input.studyId,
        studyId: input.studyId,
        after: { userId: user.id, email: user.email, role: memberRole },
      })
      return member
    })
  },
})

export const removeMember = defineOperation({
  name: 'studies.remove-member',
  scope: 'studies:update',
  input: z.object({ studyId: id, userId: id }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      await findVisibleStudy(tx, actor, input.studyId)
      const member = await tx.studyMember.findUnique({ where: { studyId_userId: input } })
      if (!member) throw notFound('Member')
      await tx.studyMember.delete({ where: { studyId_userId: input } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'study.remove-member',
        resourceType: 'study',
        resourceId: input.studyId,
        studyId: input.studyId,
        before: { userId: member.userId, role: member.role },
      })
      return { removed: true }
    })
  },
})
