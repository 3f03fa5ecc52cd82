import { z } from 'zod'
import { studyProtocolChoices } from '@/lib/protocols/registry'
import type { Actor } from '@/lib/server/actor'
import type { Prisma } from '@/lib/generated/prisma/client'
import { hasScope, isRole, type Role } from '@/lib/server/auth/roles'
import {
  creatorStudyRole,
  mayHoldStudyRole,
  STUDY_PERMISSIONS,
  STUDY_ROLE_LABELS,
  STUDY_ROLES,
  type StudyPermission,
  type StudyRole,
  studyPermissions,
  studyRolesWith,
} from '@/lib/server/auth/study-roles'
import { db, type Tx } from '@/lib/server/db'
import { badRequest, conflict, forbidden, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { email } from '@/lib/server/services/users'

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

/**
 * The studies in which an actor has a study permission, as a Prisma filter (usable under any
 * relation: `{ study: studiesWhere(actor, 'read') }`). Every study with studies:read-all; otherwise
 * the studies whose membership role grants the permission, when the account's scopes back it
 * (lib/server/auth/study-roles.ts). The same rule as `requireStudyAccess`, for lists and joins.
 */
export function studiesWhere(actor: Actor, need: StudyPermission = 'read'): Prisma.StudyWhereInput {
  if (hasScope(actor.role, 'studies:read-all')) return {}
  const roles = studyRolesWith(need).filter((r) => studyPermissions(actor.role, r).includes(need))
  return { members: { some: { userId: actor.userId, role: { in: roles } } } }
}

const NEEDS: Record<StudyPermission, string> = {
  read: 'You cannot see this study.',
  write: 'Your role in this study only lets you read it. A researcher or study admin of the study can do this.',
  manage: 'Only the study’s admins change its settings and members.',
  adjudicate: 'Only the study’s adjudicators, researchers and admins set final labels.',
}

/**
 * The one check of every study-scoped operation: load the study and the actor's permissions in it,
 * or refuse. Someone who cannot read the study gets 404 (its existence is not leaked); a member who
 * reads it but lacks the permission gets 403.
 */
export async function requireStudyAccess(client: Tx | typeof db, actor: Actor, studyId: string, need: StudyPermission) {
  const row = await client.study.findUnique({
    where: { id: studyId },
    include: { members: { where: { userId: actor.userId }, select: { role: true } } },
  })
  const access = row ? studyPermissions(actor.role, row.members[0]?.role) : []
  // Someone who holds the permission needed sees that much of the study (an annotator account made
  // adjudicator adjudicates without reading the study: study-roles.ts).
  if (!row || !(access.includes('read') || access.includes(need))) throw notFound('Study')
  if (!access.includes(need)) throw forbidden(NEEDS[need])
  const { members: _m, ...study } = row
  return { ...study, access }
}

/** The actor's permissions in a study they can see (for pages that hide what they cannot do). */
export async function studyAccess(actor: Actor, studyId: string): Promise<StudyPermission[]> {
  if (hasScope(actor.role, 'studies:read-all')) return [...STUDY_PERMISSIONS]
  const m = await db.studyMember.findUnique({
    where: { studyId_userId: { studyId, userId: actor.userId } },
    select: { role: true },
  })
  return studyPermissions(actor.role, m?.role)
}

const studySummary = {
  id: true,
  name: true,
  description: true,
  protocol: true,
  createdAt: true,
  updatedAt: true,
  archivedAt: true,
  _count: { select: { members: true, runs: true } },
} as const satisfies Prisma.StudySelect

export const listStudies = defineOperation({
  name: 'studies.list',
  scope: 'studies:read',
  input: z.object({
    ...pageInput,
    q: z.string().trim().max(200).optional(),
    archived: boolParam.default(false),
    /** Only the studies the actor may change (write: its runs, datasets …), e.g. to create a run in. */
    need: z.enum(['read', 'write']).default('read'),
  }),
  async run(actor, { page, pageSize, q, archived, need }) {
    const where = {
      ...studiesWhere(actor, need),
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
    const { access } = await requireStudyAccess(db, actor, studyId, 'read')
    const study = await db.study.findUniqueOrThrow({
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
    // The protocols the study's runs use, most runs first: what the study page names when the study
    // itself names no protocol (a study may run several).
    const used = await db.run.groupBy({
      by: ['protocol'],
      where: { studyId },
      _count: { _all: true },
      orderBy: { protocol: 'asc' },
    })
    const runProtocols = used
      .map((u) => ({ protocol: u.protocol, label: PROTOCOL_LABELS[u.protocol] ?? u.protocol, runs: u._count._all }))
      .sort((a, b) => b.runs - a.runs || a.label.localeCompare(b.label))
    /** `access`: what the actor may do in this study (read, write, manage). */
    return { ...study, access, runProtocols }
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
          // The creator is the study's first admin (manages it; can hand that on, see setMemberRole).
          members: { create: { userId: actor.userId, role: creatorStudyRole(actor.role) } },
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
      const before = await requireStudyAccess(tx, actor, studyId, 'manage')
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
      const before = await requireStudyAccess(tx, actor, studyId, 'manage')
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

/** The account role of a user, as far as study roles are concerned (an unknown one counts as viewer). */
const accountRoleOf = (role: string): Role => (isRole(role) ? role : 'viewer')

/** A study role as the member forms and API send it. */
const role = z.enum(STUDY_ROLES, { message: `Study role must be one of: ${STUDY_ROLES.join(', ')}.` })

function assertMayHold(email: string, accountRole: Role, studyRole: StudyRole) {
  if (!mayHoldStudyRole(accountRole, studyRole)) {
    throw badRequest(
      `${email} is a ${accountRole}; a study role cannot grant more than the account role (a researcher may be a study admin; a viewer is never an adjudicator).`,
      { role: ['Choose a role their account allows.'] },
    )
  }
}

/**
 * Membership changes of one study run one at a time (a row lock on the study), so two managers
 * removing each other at once cannot leave the study without one.
 */
async function lockMembers(tx: Tx, studyId: string) {
  await tx.$executeRaw`SELECT 1 FROM "Study" WHERE id = ${studyId} FOR UPDATE`
}

/**
 * Refuse a change that would leave the study without a member who manages it. Managers are the
 * members whose study role and (enabled) account give them `manage`; global admins always can, but
 * a study should keep a manager of its own.
 */
async function assertKeepsManager(tx: Tx, studyId: string, change: { userId: string; role: StudyRole | null }) {
  const members = await tx.studyMember.findMany({
    where: { studyId },
    select: { userId: true, role: true, user: { select: { role: true, disabled: true } } },
  })
  const manages = (studyRole: string | null, user: { role: string; disabled: boolean }) =>
    studyRole !== null && !user.disabled && studyPermissions(accountRoleOf(user.role), studyRole).includes('manage')
  const target = members.find((m) => m.userId === change.userId)
  if (!target || !manages(target.role, target.user)) return // the change does not touch a manager
  const after = members.filter((m) => manages(m.userId === change.userId ? change.role : m.role, m.user))
  if (after.length === 0) {
    throw badRequest('A study needs at least one manager. Make another member a study admin first, then try again.')
  }
}

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
      await requireStudyAccess(tx, actor, input.studyId, 'manage')
      const user = await tx.user.findUnique({ where: { email: input.email } })
      if (!user) throw badRequest(`No account has the email ${input.email}. An admin can create it.`)
      const accountRole = accountRoleOf(user.role)
      const memberRole = input.role ?? accountRole
      assertMayHold(user.email, accountRole, memberRole)
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
      await requireStudyAccess(tx, actor, input.studyId, 'manage')
      await lockMembers(tx, input.studyId)
      const member = await tx.studyMember.findUnique({ where: { studyId_userId: input } })
      if (!member) throw notFound('Member')
      await assertKeepsManager(tx, input.studyId, { userId: input.userId, role: null })
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

/** Change a member's study role (a manage operation; audited with the role before and after). */
export const setMemberRole = defineOperation({
  name: 'studies.set-member-role',
  scope: 'studies:update',
  input: z.object({ studyId: id, userId: id, role }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      await requireStudyAccess(tx, actor, input.studyId, 'manage')
      await lockMembers(tx, input.studyId)
      const member = await tx.studyMember.findUnique({
        where: { studyId_userId: { studyId: input.studyId, userId: input.userId } },
        include: { user: { select: { email: true, role: true } } },
      })
      if (!member) throw notFound('Member')
      assertMayHold(member.user.email, accountRoleOf(member.user.role), input.role)
      const result = {
        userId: member.userId,
        email: member.user.email,
        role: input.role,
        label: STUDY_ROLE_LABELS[input.role],
        changed: member.role !== input.role,
      }
      if (!result.changed) return result
      await assertKeepsManager(tx, input.studyId, { userId: input.userId, role: input.role })
      await tx.studyMember.update({
        where: { studyId_userId: { studyId: input.studyId, userId: input.userId } },
        data: { role: input.role },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'study.set-member-role',
        resourceType: 'study',
        resourceId: input.studyId,
        studyId: input.studyId,
        before: { userId: member.userId, email: member.user.email, role: member.role },
        after: { userId: member.userId, email: member.user.email, role: input.role },
      })
      return result
    })
  },
})
