import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { verifyPassword } from 'better-auth/crypto'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { POST as authRoute } from '@/app/api/auth/[...all]/route'
import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { getAuth } from '@/lib/server/auth/auth'
import { signInWithPassword } from '@/lib/server/auth/sign-in'
import { ensureAdminFromEnv, FirstAdminInput } from '@/lib/server/bootstrap'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { DEMO_PASSWORD, seedDemo } from '@/lib/server/seed'
import { createApiKey } from '@/lib/server/services/api-keys'
import { changePassword, createUser, setUserDisabled } from '@/lib/server/services/users'
import { makeUser } from '../support/fixtures'
import { log } from '@/lib/server/log'

afterAll(() => db.$disconnect())

const GOOD = 'violet submarine lantern 42'
/** Among the commonest passwords, each at least 8 characters (so only the strength check can refuse them). */
const COMMON = [
  'password1',
  'Password123',
  '12345678',
  'qwertyuiop',
  'iloveyou',
  'letmein123',
  'P@ssw0rd!',
  'admin1234',
]

const newEmail = () => `pw-${randomUUID().slice(0, 8)}@test.parley`

describe('common passwords are refused wherever a password is set', () => {
  it('an admin creating a user', async () => {
    const admin = await makeUser('admin')
    for (const password of COMMON) {
      const r = await execute(createUser, admin, { email: newEmail(), name: 'N', role: 'viewer', password })
      expect(r, password).toMatchObject({
        ok: false,
        status: 400,
        fieldErrors: { password: [expect.stringMatching(/too easy to guess/)] },
      })
    }
    const ok = await execute(createUser, admin, { email: newEmail(), name: 'N', role: 'viewer', password: GOOD })
    expect(ok).toMatchObject({ ok: true })
  })

  it('a password change', async () => {
    const user = await makeUser('expert', GOOD)
    for (const newPassword of COMMON) {
      const r = await execute(changePassword, user, { currentPassword: GOOD, newPassword })
      expect(r, newPassword).toMatchObject({
        ok: false,
        status: 400,
        fieldErrors: { newPassword: [expect.any(String)] },
      })
    }
    const account = await db.account.findFirstOrThrow({ where: { userId: user.userId } })
    expect(await verifyPassword({ hash: account.password as string, password: GOOD })).toBe(true)
  })

  it('the /setup page and PARLEY_ADMIN_PASSWORD (both read FirstAdminInput)', async () => {
    for (const password of COMMON) {
      expect(FirstAdminInput.safeParse({ email: newEmail(), password }).success, password).toBe(false)
    }
    expect(FirstAdminInput.safeParse({ email: newEmail(), password: GOOD }).success).toBe(true)
    const saved = { ...process.env }
    const errors = vi.spyOn(log(), 'error').mockImplementation(() => {})
    try {
      process.env.PARLEY_ADMIN_EMAIL = newEmail()
      process.env.PARLEY_ADMIN_PASSWORD = 'password1'
      await ensureAdminFromEnv()
      expect(errors).toHaveBeenCalledWith(
        { problems: expect.arrayContaining([expect.stringMatching(/too easy to guess/)]) },
        'PARLEY_ADMIN_* is invalid',
      )
    } finally {
      errors.mockRestore()
      process.env = saved
    }
  })

  it('the CLI', () => {
    const r = spawnSync(
      process.execPath,
      ['bin/parley.mjs', 'user', 'create', '--email', newEmail(), '--role', 'viewer', '--password', 'password1'],
      { env: process.env, encoding: 'utf8', timeout: 60_000 },
    )
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/too easy to guess/)
  }, 90_000)

  it("better-auth's own password routes are closed (they would skip the check)", async () => {
    const user = await makeUser('viewer', GOOD)
    const signIn = await getAuth().api.signInEmail({ body: { email: user.email, password: GOOD }, asResponse: true })
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    const headers = { cookie, origin: 'http://127.0.0.1:3000', 'content-type': 'application/json' }
    for (const [path, body] of [
      ['/api/auth/change-password', { currentPassword: GOOD, newPassword: 'password1', revokeOtherSessions: false }],
      ['/api/auth/set-password', { newPassword: 'password1' }],
      ['/api/auth/reset-password', { newPassword: 'password1', token: 'x' }],
      ['/api/auth/update-user', { name: 'renamed without an audit row' }],
      ['/api/auth/sign-up/email', { email: newEmail(), password: 'password1', name: 'x' }],
    ] as const) {
      const res = await authRoute(
        new Request(`http://127.0.0.1:3000${path}`, { method: 'POST', headers, body: JSON.stringify(body) }),
      )
      expect(res.status, path).toBe(404)
    }
    const account = await db.account.findFirstOrThrow({ where: { userId: user.userId } })
    expect(await verifyPassword({ hash: account.password as string, password: GOOD })).toBe(true)
    expect((await db.user.findUniqueOrThrow({ where: { id: user.userId } })).name).toBe('viewer tester')
  })

  it('the demo seed is exempt: its documented password would be refused, and the seed still sets it', async () => {
    const admin = await makeUser('admin')
    const r = await execute(createUser, admin, {
      email: newEmail(),
      name: 'N',
      role: 'viewer',
      password: DEMO_PASSWORD,
    })
    expect(r).toMatchObject({ ok: false, status: 400 })
    await seedDemo()
    const demo = await db.user.findUniqueOrThrow({
      where: { email: 'viewer@parley.local' },
      include: { accounts: true },
    })
    expect(await verifyPassword({ hash: demo.accounts[0]?.password as string, password: DEMO_PASSWORD })).toBe(true)
  })
})

describe('a password change revokes API keys', () => {
  it('every active key of the account stops working, and the audit row says how many', async () => {
    const user = await makeUser('researcher', GOOD)
    const keys = []
    for (const name of ['notebook', 'pipeline']) {
      const r = await execute(createApiKey, user, { name })
      if (!r.ok) throw new Error(r.error)
      keys.push(r.data.key)
    }
    const other = await makeUser('researcher')
    const otherKey = await execute(createApiKey, other, { name: 'unrelated' })
    if (!otherKey.ok) throw new Error(otherKey.error)
    const auth = (key: string) =>
      apiActor(new Request('http://x/api/v1/me', { headers: { authorization: `Bearer ${key}` } }))
    expect(await auth(keys[0] as string)).toMatchObject({ userId: user.userId })

    const changed = await execute(changePassword, user, { currentPassword: GOOD, newPassword: 'amber kettle orbit 77' })
    expect(changed).toMatchObject({ ok: true, data: { changed: true, revokedApiKeys: 2 } })
    for (const key of keys) await expect(auth(key)).rejects.toBeInstanceOf(ApiAuthError)
    expect(await auth(otherKey.data.key)).toMatchObject({ userId: other.userId })
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: 'profile.change-password', resourceId: user.userId },
    })
    expect(audit.after).toMatchObject({ revokedApiKeys: 2 })
  })
})

describe('a disabled account', () => {
  it('gets the same refusal as a wrong password, so the answer never confirms a right password', async () => {
    const admin = await makeUser('admin')
    const user = await makeUser('annotator', GOOD)
    await execute(setUserDisabled, admin, { userId: user.userId, disabled: true })
    const headers = () => new Headers({ 'x-forwarded-for': `192.0.2.${Math.floor(Math.random() * 250) + 1}` })
    const right = await signInWithPassword({ email: user.email, password: GOOD }, headers())
    const wrong = await signInWithPassword({ email: user.email, password: 'not the password' }, headers())
    expect(right).toEqual({ ok: false, error: expect.stringMatching(/^Wrong email or password/) })
    expect(right).toEqual(wrong)

    const rest = async (password: string) => {
      const res = await authRoute(
        new Request('http://127.0.0.1:3000/api/auth/sign-in/email', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.254' },
          body: JSON.stringify({ email: user.email, password }),
        }),
      )
      return { status: res.status, body: await res.json() }
    }
    const restRight = await rest(GOOD)
    expect(restRight.status).toBe(401)
    expect(restRight).toEqual(await rest('not the password'))
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(0)
  })
})
