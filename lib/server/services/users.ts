import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { hashPassword, verifyPassword } from 'better-auth/crypto'
import { z } from 'zod'
import type { Actor } from '@/lib/server/actor'
import { passwordWeakness } from '@/lib/server/auth/password-policy'
import { ROLES } from '@/lib/server/auth/roles'
import { consumeGuess, guessSucceeded } from '@/lib/server/auth/sign-in-limit'
import { db, type Tx } from '@/lib/server/db'
import { AppError, badRequest, conflict, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/audit'

export const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email({ message: 'Enter a valid email address.' }))
/**
 * A new password: 8 to 128 characters and not among the easily guessed ones (zxcvbn, see
 * password-policy.ts). Every way of setting a password goes through this schema: an admin creating
 * a user (page, REST, CLI), a password change, /setup and PARLEY_ADMIN_PASSWORD. The demo seed
 * writes its documented password with insertUser directly and is the one exemption.
 */
export const password = z
  .string()
  .min(8, 'Use at least 8 characters.')
  .max(128, 'Use at most 128 characters.')
  .superRefine((value, ctx) => {
    if (value.length < 8 || value.length > 128) return
    const weakness = passwordWeakness(value)
    if (weakness) ctx.addIssue({ code: 'custom', message: weakness })
  })
export const personName = z.string({ error: 'Enter a name.' }).trim().min(1, 'Enter a name.').max(100)
export const role = z.enum(ROLES, { message: `Role must be one of: ${ROLES.join(', ')}.` })

const userPublic = { id: true, name: true, email: true, role: true, disabled: true, createdAt: true } as const

/** Create an account with an email + password credential (hashed with scrypt by better-auth). */
export async function insertUser(
  tx: Tx,
  input: { email: string; name: string; role: z.infer<typeof role>; password: string },
) {
  const existing = await tx.user.findUnique({ where: { email: input.email } })
  if (existing) throw conflict(`A user with the email ${input.email} already exists.`)
  const id = randomUUID()
  const user = await tx.user.create({
    data: { id, email: input.email, name: input.name, role: input.role, emailVerified: true },
    select: userPublic,
  })
  await tx.account.create({
    data: {
      id: randomUUID(),
      accountId: id,
      providerId: 'credential',
      userId: id,
      password: await hashPassword(input.password),
    },
  })
  return user
}

export const CreateUserInput = z.object({ email, name: personName, role, password })

export const createUser = defineOperation({
  name: 'users.create',
  scope: 'users:manage',
  input: CreateUserInput,
  async run(actor: Actor, input) {
    return db.$transaction(async (tx) => {
      const user = await insertUser(tx, input)
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'user.create',
        resourceType: 'user',
        resourceId: user.id,
        after: user,
      })
      return user
    })
  },
})

export const listUsers = defineOperation({
  name: 'users.list',
  scope: 'users:read',
  input: z.object({
    ...pageInput,
    q: z.string().trim().max(200).optional(),
    role: role.optional(),
  }),
  async run(_actor, { page, pageSize, q, role: r }) {
    const where = {
      ...(q
        ? {
            OR: [
              { email: { contains: q, mode: 'insensitive' as const } },
              { name: { contains: q, mode: 'insensitive' as const } },
            ],
          }
        : {}),
      ...(r ? { role: r } : {}),
    }
    const [items, total] = await Promise.all([
      db.user.findMany({ where, select: userPublic, orderBy: { email: 'asc' }, ...skipTake(page, pageSize) }),
      db.user.count({ where }),
    ])
    return pageOf(items, total, page, pageSize)
  },
})

async function assertNotLastAdmin(tx: Tx, userId: string) {
  const admins = await tx.user.count({ where: { role: 'admin', disabled: false, id: { not: userId } } })
  if (admins === 0) throw badRequest('Parley needs at least one active admin. Make someone else an admin first.')
}

export const updateUserRole = defineOperation({
  name: 'users.update-role',
  scope: 'users:manage',
  input: z.object({ userId: z.string().min(1).max(100), role }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      const before = await tx.user.findUnique({ where: { id: input.userId }, select: userPublic })
      if (!before) throw notFound('User')
      if (before.role === input.role) return before
      if (before.role === 'admin') await assertNotLastAdmin(tx, before.id)
      const after = await tx.user.update({
        where: { id: input.userId },
        data: { role: input.role },
        select: userPublic,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'user.update-role',
        resourceType: 'user',
        resourceId: after.id,
        before: { role: before.role },
        after: { role: after.role },
      })
      return after
    })
  },
})

export const setUserDisabled = defineOperation({
  name: 'users.set-disabled',
  scope: 'users:manage',
  input: z.object({ userId: z.string().min(1).max(100), disabled: boolParam }),
  async run(actor, input) {
    if (input.userId === actor.userId && input.disabled) throw badRequest('You cannot disable your own account.')
    return db.$transaction(async (tx) => {
      const before = await tx.user.findUnique({ where: { id: input.userId }, select: userPublic })
      if (!before) throw notFound('User')
      if (input.disabled && before.role === 'admin') await assertNotLastAdmin(tx, before.id)
      const after = await tx.user.update({
        where: { id: input.userId },
        data: { disabled: input.disabled },
        select: userPublic,
      })
      // A disabled account is signed out everywhere at once.
      if (input.disabled) await tx.session.deleteMany({ where: { userId: input.userId } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: input.disabled ? 'user.disable' : 'user.enable',
        resourceType: 'user',
        resourceId: after.id,
        before: { disabled: before.disabled },
        after: { disabled: after.disabled },
      })
      return after
    })
  },
})

export const updateProfile = defineOperation({
  name: 'profile.update',
  scope: 'profile:update',
  input: z.object({ name: personName }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      const before = await tx.user.findUniqueOrThrow({ where: { id: actor.userId }, select: { name: true } })
      const after = await tx.user.update({
        where: { id: actor.userId },
        data: { name: input.name },
        select: userPublic,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'profile.update',
        resourceType: 'user',
        resourceId: actor.userId,
        before,
        after: { name: after.name },
      })
      return after
    })
  },
})

export const changePassword = defineOperation({
  name: 'profile.change-password',
  scope: 'profile:update',
  input: z
    .object({ currentPassword: z.string().min(1, 'Enter your current password.').max(128), newPassword: password })
    .refine((v) => v.currentPassword !== v.newPassword, {
      message: 'The new password must differ from the current one.',
      path: ['newPassword'],
    }),
  async run(actor, input, ctx) {
    const account = await db.account.findFirst({ where: { userId: actor.userId, providerId: 'credential' } })
    if (!account?.password) throw badRequest('This account has no password to change.')
    // Whoever holds a session (or a key) must not get to guess the password behind it at will: the
    // current password is limited like a sign-in (auth/sign-in-limit.ts), per account.
    const guess = { account: `password:${actor.userId}`, client: null }
    const allowance = await consumeGuess(guess)
    if (!allowance.ok) {
      const s = allowance.retryAfterSeconds
      throw new AppError(429, `Too many wrong current passwords. Try again in ${s} second${s === 1 ? '' : 's'}.`, {
        currentPassword: ['Too many wrong tries; wait and try again.'],
      })
    }
    const ok = await verifyPassword({ hash: account.password, password: input.currentPassword })
    if (!ok) throw badRequest('Your current password is not correct.', { currentPassword: ['Not correct.'] })
    await guessSucceeded(guess)
    const hash = await hashPassword(input.newPassword)
    return db.$transaction(async (tx) => {
      await tx.account.update({ where: { id: account.id }, data: { password: hash } })
      // Every other session of this user ends; the one making the change stays signed in.
      await tx.session.deleteMany({
        where: { userId: actor.userId, ...(ctx.sessionId ? { id: { not: ctx.sessionId } } : {}) },
      })
      // So do the API keys: a key made by whoever knew the old password must not outlive it.
      const revoked = await tx.apiKey.updateMany({
        where: { userId: actor.userId, revokedAt: null },
        data: { revokedAt: new Date() },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'profile.change-password',
        resourceType: 'user',
        resourceId: actor.userId,
        after: { revokedApiKeys: revoked.count },
      })
      return { changed: true, revokedApiKeys: revoked.count }
    })
  },
})

/** How long a one-time reset link stays valid. */
export const RESET_LINK_HOURS = 24
const RESET_PREFIX = 'password-reset:'
const resetIdentifier = (token: string) => `${RESET_PREFIX}${createHash('sha256').update(token).digest('hex')}`

/**
 * A password set for someone else (an admin, the CLI, a reset link) takes effect everywhere: the
 * person's sessions end, their API keys are revoked and any reset link still open is spent.
 */
async function replacePassword(tx: Tx, userId: string, newPassword: string) {
  const hash = await hashPassword(newPassword)
  const account = await tx.account.findFirst({ where: { userId, providerId: 'credential' } })
  if (account) await tx.account.update({ where: { id: account.id }, data: { password: hash } })
  else
    await tx.account.create({
      data: { id: randomUUID(), accountId: userId, providerId: 'credential', userId, password: hash },
    })
  const sessions = await tx.session.deleteMany({ where: { userId } })
  const keys = await tx.apiKey.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: new Date() } })
  await tx.verification.deleteMany({ where: { identifier: { startsWith: RESET_PREFIX }, value: userId } })
  return { signedOutSessions: sessions.count, revokedApiKeys: keys.count }
}

const userId = z.string().min(1).max(100)

export const setUserPassword = defineOperation({
  name: 'users.set-password',
  scope: 'users:manage',
  input: z.object({ userId, password }),
  async run(actor, input) {
    return db.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { id: input.userId }, select: userPublic })
      if (!user) throw notFound('User')
      const done = await replacePassword(tx, user.id, input.password)
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'user.set-password',
        resourceType: 'user',
        resourceId: user.id,
        after: done,
      })
      return { email: user.email, ...done }
    })
  },
})

/**
 * A one-time link that lets the person choose a new password without the old one. Only the SHA-256
 * of the token is stored (better-auth's Verification table, whose own reset routes Parley does not
 * serve); issuing a new link spends the previous one. The token is returned once, to the admin.
 */
export const issueResetLink = defineOperation({
  name: 'users.issue-reset-link',
  scope: 'users:manage',
  input: z.object({ userId }),
  async run(actor, input) {
    const token = randomBytes(32).toString('base64url')
    const expiresAt = new Date(Date.now() + RESET_LINK_HOURS * 3600_000)
    return db.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { id: input.userId }, select: userPublic })
      if (!user) throw notFound('User')
      if (user.disabled) throw badRequest('This account is disabled. Enable it before sending a reset link.')
      await tx.verification.deleteMany({ where: { identifier: { startsWith: RESET_PREFIX }, value: user.id } })
      await tx.verification.create({
        data: { id: randomUUID(), identifier: resetIdentifier(token), value: user.id, expiresAt },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'user.issue-reset-link',
        resourceType: 'user',
        resourceId: user.id,
        after: { expiresAt },
      })
      return { email: user.email, token, path: `/reset-password/${token}`, expiresAt }
    })
  },
})

export const ResetWithLinkInput = z
  .object({
    token: z.string().min(20).max(100),
    password,
    confirm: z.string().max(128),
  })
  .refine((v) => v.password === v.confirm, { message: 'The two passwords differ.', path: ['confirm'] })

/** Whom an unspent, unexpired reset link is for (the reset page shows it), or null. */
export async function resetLinkOwner(token: string): Promise<{ email: string; name: string } | null> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null
  const v = await db.verification.findFirst({
    where: { identifier: resetIdentifier(token), expiresAt: { gt: new Date() } },
  })
  if (!v) return null
  const user = await db.user.findUnique({ where: { id: v.value }, select: { email: true, name: true, disabled: true } })
  return user && !user.disabled ? { email: user.email, name: user.name } : null
}

/**
 * Spend a reset link (the signed-out person's side, so no actor and no operation): the link is
 * deleted in the same transaction that sets the password, so it works once even when sent twice.
 */
export async function resetPasswordWithLink(raw: unknown) {
  const input = ResetWithLinkInput.parse(raw)
  return db.$transaction(async (tx) => {
    const spent = await tx.verification.findFirst({ where: { identifier: resetIdentifier(input.token) } })
    const gone = await tx.verification.deleteMany({
      where: { identifier: resetIdentifier(input.token), expiresAt: { gt: new Date() } },
    })
    if (!spent || gone.count === 0)
      throw badRequest('This reset link is expired or was already used. Ask an admin for a new one.')
    const user = await tx.user.findUnique({ where: { id: spent.value }, select: userPublic })
    if (!user || user.disabled)
      throw badRequest('This reset link is expired or was already used. Ask an admin for a new one.')
    // Now that the person is known, their email and name count as guessable too (the link stays
    // unspent: the throw rolls the transaction back).
    const weakness = passwordWeakness(input.password, [user.email, user.email.split('@')[0] ?? '', user.name])
    if (weakness) throw badRequest(weakness, { password: [weakness] })
    const done = await replacePassword(tx, user.id, input.password)
    await writeAudit(tx, {
      actor: { userId: user.id, email: user.email, via: 'reset-link' },
      action: 'user.reset-password',
      resourceType: 'user',
      resourceId: user.id,
      after: done,
    })
    return { email: user.email, ...done }
  })
}
