import { spawnSync } from 'node:child_process'
import { verifyPassword } from 'better-auth/crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { resetPasswordAction } from '@/app/actions/reset-password'
import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { getAuth } from '@/lib/server/auth/auth'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import {
  issueResetLink,
  resetLinkOwner,
  resetPasswordWithLink,
  setUserDisabled,
  setUserPassword,
} from '@/lib/server/services/users'
import { makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

const OLD = 'violet submarine lantern 42'
const NEW = 'amber kettle orbit 77'

async function signIn(email: string, password: string) {
  const res = await getAuth().api.signInEmail({ body: { email, password }, asResponse: true })
  return res.status
}

async function passwordIs(userId: string, password: string) {
  const account = await db.account.findFirstOrThrow({ where: { userId, providerId: 'credential' } })
  return verifyPassword({ hash: account.password as string, password })
}

/** A user signed in twice (two browsers) with one API key. */
async function busyUser() {
  const user = await makeUser('expert', OLD)
  expect(await signIn(user.email, OLD)).toBe(200)
  expect(await signIn(user.email, OLD)).toBe(200)
  const key = await execute(createApiKey, user, { name: 'script' })
  if (!key.ok) throw new Error(key.error)
  expect(await db.session.count({ where: { userId: user.userId } })).toBe(2)
  return { user, key: key.data.key }
}

const keyWorks = (key: string) =>
  apiActor(new Request('http://x/api/v1/me', { headers: { authorization: `Bearer ${key}` } })).then(
    () => true,
    (e) => {
      if (e instanceof ApiAuthError) return false
      throw e
    },
  )

describe('an admin sets a new password', () => {
  it('the new password works, the old one not, and the person is signed out everywhere', async () => {
    const admin = await makeUser('admin')
    const { user, key } = await busyUser()
    const r = await execute(setUserPassword, admin, { userId: user.userId, password: NEW })
    expect(r).toMatchObject({ ok: true, data: { signedOutSessions: 2, revokedApiKeys: 1 } })
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(0)
    expect(await keyWorks(key)).toBe(false)
    expect(await passwordIs(user.userId, NEW)).toBe(true)
    expect(await signIn(user.email, NEW)).toBe(200)
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: 'user.set-password', resourceId: user.userId },
    })
    expect(audit).toMatchObject({ actorUserId: admin.userId, after: { signedOutSessions: 2, revokedApiKeys: 1 } })
    expect(JSON.stringify(audit)).not.toContain(NEW)
  })

  it('the password policy holds, and only admins may', async () => {
    const admin = await makeUser('admin')
    const researcher = await makeUser('researcher')
    const { user } = await busyUser()
    expect(await execute(setUserPassword, admin, { userId: user.userId, password: 'password1' })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { password: [expect.stringMatching(/too easy to guess/)] },
    })
    expect(await execute(setUserPassword, researcher, { userId: user.userId, password: NEW })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect(await passwordIs(user.userId, OLD)).toBe(true)
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(2)
  })
})

describe('a one-time reset link', () => {
  it('works once: sets the password, signs out everywhere, revokes keys; a second use is refused', async () => {
    const admin = await makeUser('admin')
    const { user, key } = await busyUser()
    const issued = await execute(issueResetLink, admin, { userId: user.userId })
    if (!issued.ok) throw new Error(issued.error)
    const { token } = issued.data
    expect(issued.data.path).toBe(`/reset-password/${token}`)
    // Only a hash of the token is stored, and the audit row does not hold it.
    expect(JSON.stringify(await db.verification.findMany())).not.toContain(token)
    expect(JSON.stringify(await db.auditLog.findMany({ where: { resourceId: user.userId } }))).not.toContain(token)
    expect(await resetLinkOwner(token)).toMatchObject({ email: user.email })

    // The two passwords must agree and pass the policy; a refusal spends nothing.
    await expect(resetPasswordWithLink({ token, password: NEW, confirm: 'other' })).rejects.toThrow()
    await expect(resetPasswordWithLink({ token, password: 'password1', confirm: 'password1' })).rejects.toThrow()
    expect(await resetLinkOwner(token)).not.toBeNull()

    const done = await resetPasswordWithLink({ token, password: NEW, confirm: NEW })
    expect(done).toMatchObject({ email: user.email, signedOutSessions: 2, revokedApiKeys: 1 })
    expect(await passwordIs(user.userId, NEW)).toBe(true)
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(0)
    expect(await keyWorks(key)).toBe(false)
    expect(await resetLinkOwner(token)).toBeNull()
    await expect(resetPasswordWithLink({ token, password: OLD, confirm: OLD })).rejects.toThrow(
      /expired or was already used/,
    )
    expect(await passwordIs(user.userId, NEW)).toBe(true)
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: 'user.reset-password', resourceId: user.userId },
    })
    expect(audit).toMatchObject({ via: 'reset-link', actorUserId: user.userId })
  })

  it('the form action answers with messages, not exceptions', async () => {
    const admin = await makeUser('admin')
    const { user } = await busyUser()
    const issued = await execute(issueResetLink, admin, { userId: user.userId })
    if (!issued.ok) throw new Error(issued.error)
    const fd = (password: string, confirm = password) => {
      const f = new FormData()
      f.set('token', issued.data.token)
      f.set('password', password)
      f.set('confirm', confirm)
      return f
    }
    expect(await resetPasswordAction(null, fd('password1'))).toMatchObject({
      ok: false,
      fieldErrors: { password: [expect.stringMatching(/too easy to guess/)] },
    })
    expect(await resetPasswordAction(null, fd(NEW, 'x'))).toMatchObject({
      ok: false,
      fieldErrors: { confirm: [expect.any(String)] },
    })
    expect(await resetPasswordAction(null, fd(NEW))).toMatchObject({ ok: true })
    expect(await resetPasswordAction(null, fd(NEW))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/already used/),
    })
  })

  it('a refused password says why, beside the field: what is guessable, and the person’s own email counts', async () => {
    const admin = await makeUser('admin')
    const { user } = await busyUser()
    const issued = await execute(issueResetLink, admin, { userId: user.userId })
    if (!issued.ok) throw new Error(issued.error)
    const fd = (password: string) => {
      const f = new FormData()
      f.set('token', issued.data.token)
      f.set('password', password)
      f.set('confirm', password)
      return f
    }
    // The reason, not only the verdict; shown beside the field (the form's message only sums it up).
    expect(await resetPasswordAction(null, fd('password1'))).toMatchObject({
      ok: false,
      fieldsOnly: true,
      fieldErrors: {
        password: [
          'This password is too easy to guess. It is a common password. A few unrelated words make a strong one.',
        ],
      },
    })
    expect(await resetPasswordAction(null, fd('Xk9#mP2q'))).toMatchObject({
      fieldErrors: { password: [expect.stringContaining('8 random characters are too few: use 12 or more.')] },
    })
    // The link's owner is known only once the link is read: their email is as guessable as a word.
    const own = await resetPasswordAction(null, fd(user.email))
    expect(own).toMatchObject({
      ok: false,
      fieldErrors: { password: [expect.stringContaining('It is your email, your name or the name of this site.')] },
    })
    expect(JSON.stringify(own)).not.toContain(user.email)
    expect(await resetLinkOwner(issued.data.token)).not.toBeNull()
    expect(await passwordIs(user.userId, OLD)).toBe(true)
  })

  it('a newer link spends the older one; links expire; a disabled account gets none', async () => {
    const admin = await makeUser('admin')
    const { user } = await busyUser()
    const first = await execute(issueResetLink, admin, { userId: user.userId })
    const second = await execute(issueResetLink, admin, { userId: user.userId })
    if (!first.ok || !second.ok) throw new Error('issue failed')
    expect(await resetLinkOwner(first.data.token)).toBeNull()
    expect(await resetLinkOwner(second.data.token)).not.toBeNull()
    await db.verification.updateMany({
      where: { value: user.userId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    })
    expect(await resetLinkOwner(second.data.token)).toBeNull()
    await expect(resetPasswordWithLink({ token: second.data.token, password: NEW, confirm: NEW })).rejects.toThrow(
      /expired/,
    )
    expect(await passwordIs(user.userId, OLD)).toBe(true)

    await execute(setUserDisabled, admin, { userId: user.userId, disabled: true })
    expect(await execute(issueResetLink, admin, { userId: user.userId })).toMatchObject({ ok: false, status: 400 })
  })
})

describe('parley user reset-password', () => {
  const cli = (args: string[], input?: string) =>
    spawnSync(process.execPath, ['bin/parley.mjs', 'user', 'reset-password', ...args], {
      env: { ...process.env, BETTER_AUTH_URL: 'https://parley.example.org' },
      encoding: 'utf8',
      timeout: 60_000,
      input,
    })

  it('sets a password from stdin (signing the person out) or prints a one-time link', async () => {
    const { user } = await busyUser()
    const set = cli([user.email, '--password-stdin'], `${NEW}\n`)
    expect(set.stderr).toBe('')
    expect(set.status).toBe(0)
    expect(set.stdout).toMatch(/signed out of 2 session/)
    expect(await passwordIs(user.userId, NEW)).toBe(true)
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(0)

    const link = cli([user.email, '--link'])
    expect(link.status).toBe(0)
    const url = link.stdout.trim()
    expect(url).toMatch(/^https:\/\/parley\.example\.org\/reset-password\/[A-Za-z0-9_-]{43}$/)
    const token = url.split('/').pop() as string
    expect(await resetLinkOwner(token)).toMatchObject({ email: user.email })

    const weak = cli([user.email, '--password', 'password1'])
    expect(weak.status).toBe(1)
    expect(weak.stderr).toMatch(/too easy to guess/)
    expect(cli(['nobody@nowhere.test', '--link']).status).toBe(1)
  }, 120_000)
})
