import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { POST } from '@/app/api/auth/[...all]/route'
import { installPeerCapture } from '@/lib/server/auth/client-address'
import { signInWithPassword } from '@/lib/server/auth/sign-in'
import {
  backoffSeconds,
  consumeGuess,
  guessKeys,
  guessLimits,
  signInAccount,
  UNDER_ATTACK_DELAY_MS,
} from '@/lib/server/auth/sign-in-limit'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { changePassword } from '@/lib/server/services/users'
import { makeUser } from '../support/fixtures'
import { type ServedRoute, serveRoute } from '../support/http-route'

/**
 * Password guessing stays slow without anyone being able to lock an account (sign-in-limit.ts): per
 * (account, address) back-off after a few free failures, a per-address limit over all accounts, and
 * an account-wide ceiling that takes the free failures away and slows attempts, but never refuses an
 * address that has not failed.
 */
const PER_MINUTE = 5
const FREE = 3
const ACCOUNT_PER_HOUR = 8
const RIGHT = 'violet submarine lantern 42'
const NAMES = ['PARLEY_SIGNIN_PER_MINUTE', 'PARLEY_SIGNIN_FREE_FAILURES', 'PARLEY_SIGNIN_ACCOUNT_PER_HOUR']
const saved = Object.fromEntries([...NAMES, 'PARLEY_TRUSTED_PROXIES'].map((n) => [n, process.env[n]]))

let served: ServedRoute
beforeAll(async () => {
  process.env.PARLEY_SIGNIN_PER_MINUTE = String(PER_MINUTE)
  process.env.PARLEY_SIGNIN_FREE_FAILURES = String(FREE)
  process.env.PARLEY_SIGNIN_ACCOUNT_PER_HOUR = String(ACCOUNT_PER_HOUR)
  installPeerCapture()
  served = await serveRoute(POST)
})
beforeEach(async () => {
  await db.$executeRaw`DELETE FROM "SignInLimit" WHERE true`
})
afterEach(() => {
  process.env.PARLEY_TRUSTED_PROXIES = saved.PARLEY_TRUSTED_PROXIES
  if (saved.PARLEY_TRUSTED_PROXIES === undefined) delete process.env.PARLEY_TRUSTED_PROXIES
})
afterAll(async () => {
  for (const [n, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[n]
    else process.env[n] = v
  }
  await served.close()
  await db.$disconnect()
})

/** POST /api/auth/sign-in/email over HTTP to better-auth's route, as a browser or script would. */
async function restSignIn(email: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${served.url}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
  })
  const body = (await res.json().catch(() => ({}))) as { message?: string }
  return { status: res.status, message: body.message ?? '', retryAfter: Number(res.headers.get('retry-after')) }
}

/** The sign-in page's path (a server action), from an address. */
const pageSignIn = (email: string, password: string, address: string) =>
  signInWithPassword({ email, password }, new Headers({ 'x-forwarded-for': address }))

/**
 * As if the pair's last failure had just happened: a sign-in takes a few hundred ms of scrypt, so on
 * a busy machine a 1 s wait may be over before the next request arrives; this keeps the clock still.
 */
async function justFailed(account: string, client: string | null) {
  const key = guessKeys(account, client).pair
  await db.$executeRaw`UPDATE "SignInLimit" SET "windowStart" = now() WHERE "key" = ${key}`
}

/** As if `seconds` had passed: every counter of this test (each test starts with none) is older. */
async function age(seconds: number) {
  await db.$executeRaw`UPDATE "SignInLimit" SET "windowStart" = "windowStart" - make_interval(secs => ${seconds}::float8) WHERE true`
}

describe('guessing stays slow', () => {
  it('one address gets the free failures, then waits 1 s, 2 s, 4 s … after each failure; even the right password waits', async () => {
    // REST calls come through the test's own (trusted) loopback proxy, as the page's do; the
    // per-address limit (tested below) is out of the way here.
    process.env.PARLEY_TRUSTED_PROXIES = '127.0.0.1'
    process.env.PARLEY_SIGNIN_PER_MINUTE = '1000'
    onTestFinished(() => {
      process.env.PARLEY_SIGNIN_PER_MINUTE = String(PER_MINUTE)
    })
    const user = await makeUser('expert', RIGHT)
    const address = '198.51.100.7'
    const account = signInAccount(user.email)
    for (let i = 1; i <= FREE; i++)
      expect(await pageSignIn(user.email, `wrong ${i}`, address)).toEqual({
        ok: false,
        error: expect.stringMatching(/^Wrong email or password/),
      })
    await justFailed(account, address)
    expect(await pageSignIn(user.email, 'wrong', address)).toEqual({
      ok: false,
      error: expect.stringMatching(/^Too many failed sign-ins to this account/),
    })
    // The guesser's own address waits, whatever it sends.
    expect(await pageSignIn(user.email, RIGHT, address)).toMatchObject({ ok: false })
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(0)

    // Each wait over, one more try; each failure doubles the next wait.
    const waits = []
    for (let i = 0; i < 4; i++) {
      await justFailed(account, address)
      const refused = await restSignIn(user.email, 'wrong again', { 'x-forwarded-for': address })
      expect(refused.status).toBe(429)
      waits.push(refused.retryAfter)
      await age(refused.retryAfter)
      expect((await restSignIn(user.email, 'wrong again', { 'x-forwarded-for': address })).status).toBe(401)
    }
    expect(waits).toEqual([1, 2, 4, 8])
    // Its wait over, the right password from that address signs in and clears its failures.
    await age(16)
    expect(await pageSignIn(user.email, RIGHT, address)).toEqual({ ok: true })
    for (let i = 1; i <= FREE; i++)
      expect(await pageSignIn(user.email, 'wrong', address)).toMatchObject({ error: /^Wrong email/ })
  })

  it('the arithmetic: an address guesses at most about 40 times a day, and an account under attack about 17 times a day per address', () => {
    const limits = { ...guessLimits({}) }
    expect(limits).toEqual({ perMinute: 20, freeFailures: 5, accountPerHour: 100 })
    /** Guesses a pair gets in `seconds` when it tries again the moment each wait ends. */
    const guessesIn = (seconds: number, underAttack: boolean) => {
      let t = 0
      let n = 0
      for (;;) {
        t += backoffSeconds(n, limits, underAttack)
        if (t > seconds) return n
        n++
      }
    }
    const day = 86_400
    expect(guessesIn(day, false)).toBeLessThanOrEqual(45)
    expect(guessesIn(day, true)).toBeLessThanOrEqual(17)
    // Then one an hour, or one a day under attack (the pair is remembered for two days).
    expect(guessesIn(2 * day, false) - guessesIn(day, false)).toBe(24)
    expect(guessesIn(2 * day, true) - guessesIn(day, true)).toBeLessThanOrEqual(2)
  })

  it('parallel attempts from one address get exactly the free failures through', async () => {
    const email = `race-${randomUUID()}@test.parley`
    const results = await Promise.all(
      Array.from({ length: 4 * FREE }, () => consumeGuess({ account: signInAccount(email), client: '10.9.8.7' })),
    )
    expect(results.filter((r) => r.ok)).toHaveLength(FREE)
  })

  it('one address trying many accounts is limited per minute (password spraying), whichever accounts it names', async () => {
    const statuses = []
    for (let i = 1; i <= PER_MINUTE + 2; i++) {
      const r = await restSignIn(`nobody-${i}-${randomUUID().slice(0, 6)}@test.parley`, 'wrong password', {
        'x-forwarded-for': '203.0.113.9',
      })
      statuses.push(r.status)
      if (r.status === 429) {
        expect(r.message).toMatch(/^Too many failed sign-ins from your network/)
        expect(r.retryAfter).toBeGreaterThan(0)
        expect(r.retryAfter).toBeLessThanOrEqual(60)
      }
    }
    expect(statuses).toEqual([...Array(PER_MINUTE).fill(401), 429, 429])
  })
})

describe('nobody locks anyone out', () => {
  it('a stranger failing from many addresses cannot stop the owner signing in from theirs', async () => {
    process.env.PARLEY_TRUSTED_PROXIES = '127.0.0.1'
    const user = await makeUser('researcher', RIGHT)
    const account = signInAccount(user.email)
    // Past the account's ceiling, from ever new addresses (each stays within its free failures).
    let n = 0
    for (let a = 1; n < ACCOUNT_PER_HOUR + 4; a++)
      for (let i = 0; i < FREE && n < ACCOUNT_PER_HOUR + 4; i++, n++)
        await pageSignIn(user.email, `wrong ${n}`, `192.0.2.${a}`)
    // Under attack: an address that failed once waits at once (no free failures any more) …
    expect(await pageSignIn(user.email, 'wrong', '192.0.2.200')).toMatchObject({ error: /^Wrong email/ })
    await justFailed(account, '192.0.2.200')
    expect(await pageSignIn(user.email, 'wrong', '192.0.2.200')).toMatchObject({
      error: /^Too many failed sign-ins to this account/,
    })
    // … while the owner's address, which has not failed, signs in with the right password (slowed).
    const t0 = Date.now()
    expect(await pageSignIn(user.email, RIGHT, '203.0.113.77')).toEqual({ ok: true })
    expect(Date.now() - t0).toBeGreaterThanOrEqual(UNDER_ATTACK_DELAY_MS - 50)
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(1)
    // The owner may even mistype once: a short wait, not a lockout.
    expect(await pageSignIn(user.email, 'typo', '203.0.113.78')).toMatchObject({ error: /^Wrong email/ })
    await justFailed(account, '203.0.113.78')
    const refused = await restSignIn(user.email, RIGHT, { 'x-forwarded-for': '203.0.113.78' })
    expect(refused.retryAfter).toBeLessThanOrEqual(2)
    await age(2)
    expect((await restSignIn(user.email, RIGHT, { 'x-forwarded-for': '203.0.113.78' })).status).toBe(200)
  })

  it('a client is its socket address: a rotating X-Forwarded-For (or a forged peer header) from an untrusted peer is one client', async () => {
    const user = await makeUser('expert', RIGHT)
    const statuses = []
    for (let i = 1; i <= FREE + 2; i++) {
      if (i > FREE) await justFailed(signInAccount(user.email), '127.0.0.1')
      const r = await restSignIn(user.email, 'wrong password', {
        'x-forwarded-for': `203.0.113.${i}`,
        'x-real-ip': `203.0.113.${i}`,
        'x-parley-peer': `192.0.2.${i}`,
      })
      statuses.push(r.status)
    }
    expect(statuses).toEqual([...Array(FREE).fill(401), 429, 429])
  })

  it('behind a trusted proxy each forwarded client backs off on its own', async () => {
    process.env.PARLEY_TRUSTED_PROXIES = '127.0.0.1'
    const user = await makeUser('researcher', RIGHT)
    const statuses = []
    for (let i = 1; i <= FREE + 1; i++) {
      if (i > FREE) await justFailed(signInAccount(user.email), '203.0.113.101')
      statuses.push((await restSignIn(user.email, 'wrong password', { 'x-forwarded-for': '203.0.113.101' })).status)
    }
    expect(statuses).toEqual([...Array(FREE).fill(401), 429])
    await justFailed(signInAccount(user.email), '203.0.113.101')
    expect((await restSignIn(user.email, RIGHT, { 'x-forwarded-for': '203.0.113.101' })).status).toBe(429)
    expect((await restSignIn(user.email, RIGHT, { 'x-forwarded-for': '203.0.113.102' })).status).toBe(200)
  })
})

describe('changing your password', () => {
  it('limits guesses at the current password: free failures, then back-off that the right password waits out too', async () => {
    const user = await makeUser('expert', RIGHT)
    const change = (currentPassword: string) =>
      execute(changePassword, user, { currentPassword, newPassword: 'amber gazelle quietly 77' })
    const account = `password:${user.userId}`
    for (let i = 1; i <= FREE; i++)
      expect(await change(`wrong ${i}`)).toMatchObject({ ok: false, status: 400, error: /not correct/ })
    await justFailed(account, null)
    const refused = await change(RIGHT)
    expect(refused).toMatchObject({ ok: false, status: 429, error: /Too many wrong current passwords/ })
    // Wrong again after the wait: the next wait is longer.
    await age(1)
    expect(await change('wrong again')).toMatchObject({ status: 400 })
    await justFailed(account, null)
    expect(await change(RIGHT)).toMatchObject({ status: 429, error: /Try again in 2 seconds/ })
    await age(2)
    expect(await change(RIGHT)).toMatchObject({ ok: true })
  })
})
