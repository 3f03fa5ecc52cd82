import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { POST } from '@/app/api/auth/[...all]/route'
import { installPeerCapture } from '@/lib/server/auth/client-address'
import { signInWithPassword } from '@/lib/server/auth/sign-in'
import { consumeSignInAttempt, signInKeys } from '@/lib/server/auth/sign-in-limit'
import { db } from '@/lib/server/db'
import { makeUser } from '../support/fixtures'
import { type ServedRoute, serveRoute } from '../support/http-route'

const LIMIT = 5
const RIGHT = 'violet submarine lantern 42'
const saved = { perMinute: process.env.PARLEY_SIGNIN_PER_MINUTE, proxies: process.env.PARLEY_TRUSTED_PROXIES }

let served: ServedRoute
beforeAll(async () => {
  process.env.PARLEY_SIGNIN_PER_MINUTE = String(LIMIT)
  installPeerCapture()
  served = await serveRoute(POST)
})
beforeEach(async () => {
  await db.$executeRaw`DELETE FROM "SignInLimit" WHERE true`
})
afterEach(() => {
  process.env.PARLEY_TRUSTED_PROXIES = saved.proxies
  if (saved.proxies === undefined) delete process.env.PARLEY_TRUSTED_PROXIES
})
afterAll(async () => {
  process.env.PARLEY_SIGNIN_PER_MINUTE = saved.perMinute
  if (saved.perMinute === undefined) delete process.env.PARLEY_SIGNIN_PER_MINUTE
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
  return { status: res.status, message: body.message ?? '', retryAfter: res.headers.get('retry-after') }
}

/** Ends the current window of this account's counter, as if a minute had passed. */
async function endWindow(email: string) {
  const key = signInKeys(email, '').email
  await db.$executeRaw`UPDATE "SignInLimit" SET "windowStart" = "windowStart" - interval '61 seconds' WHERE "key" = ${key}`
}

describe('the sign-in page (server action path)', () => {
  it('refuses an account after the limit even from ever-new addresses, then the right password too, until the window ends', async () => {
    const user = await makeUser('expert', RIGHT)
    const results = []
    for (let i = 1; i <= LIMIT + 3; i++) {
      results.push(
        await signInWithPassword(
          { email: user.email, password: `wrong password ${i}` },
          new Headers({ 'x-forwarded-for': `198.51.100.${i}` }),
        ),
      )
    }
    for (const r of results.slice(0, LIMIT))
      expect(r).toEqual({ ok: false, error: expect.stringMatching(/^Wrong email or password/) })
    for (const r of results.slice(LIMIT))
      expect(r).toEqual({ ok: false, error: expect.stringMatching(/^Too many sign-in attempts/) })
    const right = await signInWithPassword(
      { email: user.email, password: RIGHT },
      new Headers({ 'x-forwarded-for': '198.51.100.200' }),
    )
    expect(right).toEqual({ ok: false, error: expect.stringMatching(/even the right password is refused/) })
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(0)

    await endWindow(user.email)
    const later = await signInWithPassword(
      { email: user.email, password: RIGHT },
      new Headers({ 'x-forwarded-for': '198.51.100.201' }),
    )
    expect(later).toEqual({ ok: true })
    expect(await db.session.count({ where: { userId: user.userId } })).toBe(1)
  })
})

describe('REST sign-in (/api/auth/sign-in/email)', () => {
  it('counts a client by its socket address: a rotating X-Forwarded-For (or a forged peer header) from an untrusted peer is one client', async () => {
    const statuses = []
    for (let i = 1; i <= LIMIT + 3; i++) {
      const r = await restSignIn(`nobody-${i}-${randomUUID().slice(0, 6)}@test.parley`, 'wrong password', {
        'x-forwarded-for': `203.0.113.${i}`,
        'x-real-ip': `203.0.113.${i}`,
        'x-parley-peer': `192.0.2.${i}`,
      })
      statuses.push(r.status)
      if (i > LIMIT) {
        expect(r.message).toMatch(/^Too many sign-in attempts/)
        expect(Number(r.retryAfter)).toBeGreaterThan(0)
        expect(Number(r.retryAfter)).toBeLessThanOrEqual(60)
      }
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(401), 429, 429, 429])
  })

  it('behind a trusted proxy counts the forwarded client, and the account limit still holds when that rotates', async () => {
    process.env.PARLEY_TRUSTED_PROXIES = '127.0.0.1'
    const user = await makeUser('researcher', RIGHT)
    const statuses = []
    for (let i = 1; i <= LIMIT + 2; i++) {
      statuses.push(
        (await restSignIn(user.email, 'wrong password', { 'x-forwarded-for': `203.0.113.${100 + i}` })).status,
      )
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(401), 429, 429])
    const right = await restSignIn(user.email, RIGHT, { 'x-forwarded-for': '203.0.113.250' })
    expect(right.status).toBe(429)
    expect(right.message).toMatch(/even the right password is refused/)

    // One forwarded client trying many accounts is limited too, whatever account it names.
    const perClient = []
    for (let i = 1; i <= LIMIT + 1; i++) {
      perClient.push(
        (
          await restSignIn(`nobody-${i}-${randomUUID().slice(0, 6)}@test.parley`, 'x', {
            'x-forwarded-for': '198.18.0.7',
          })
        ).status,
      )
    }
    expect(perClient).toEqual([...Array(LIMIT).fill(401), 429])

    await endWindow(user.email)
    expect((await restSignIn(user.email, RIGHT, { 'x-forwarded-for': '203.0.113.251' })).status).toBe(200)
  })
})

describe('the counters', () => {
  it('let exactly the limit through when attempts race', async () => {
    const email = `race-${randomUUID()}@test.parley`
    const results = await Promise.all(
      Array.from({ length: 4 * LIMIT }, (_, i) => consumeSignInAttempt({ email, client: `10.9.8.${i}` })),
    )
    expect(results.filter((r) => r.ok)).toHaveLength(LIMIT)
  })
})
