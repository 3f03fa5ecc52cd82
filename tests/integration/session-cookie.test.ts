import { randomInt } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GET as restGET } from '@/app/api/v1/[...rest]/route'
import { sessionActor } from '@/lib/server/api/auth'
import { getAuth } from '@/lib/server/auth/auth'
import { readSession, verifiedToken } from '@/lib/server/auth/session-cookie'
import { db } from '@/lib/server/db'
import { makeUser } from '../support/fixtures'

const PASSWORD = 'violet submarine lantern 42'
const NAME = 'better-auth.session_token'

afterAll(() => db.$disconnect())

/** A fresh account per sign-in: the tests stay far below the per-account sign-in limit, rerun or not. */
async function signedIn() {
  const user = await makeUser('expert', PASSWORD)
  return { user, ...(await signIn(user.email)) }
}

/**
 * Signs in from an address of its own: without one every in-process sign-in of the suite counts
 * against the one "unknown" client's limit (PARLEY_SIGNIN_PER_MINUTE), which parallel files share.
 */
async function signIn(email: string) {
  const address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
  const res = await getAuth().api.signInEmail({
    body: { email, password: PASSWORD },
    headers: new Headers({ 'x-forwarded-for': address }),
    asResponse: true,
  })
  expect(res.status).toBe(200)
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  const value = decodeURIComponent(cookie.slice(cookie.indexOf('=') + 1))
  return { cookie, token: value.slice(0, value.lastIndexOf('.')) }
}

const withCookie = (cookie: string) => new Headers({ cookie })
const betterAuth = (headers: Headers) => getAuth().api.getSession({ headers })

describe('reading the session cookie without better-auth’s endpoint', () => {
  it('gives the same person and session as better-auth for a signed-in cookie', async () => {
    const { user, cookie } = await signedIn()
    const ours = await readSession(withCookie(cookie))
    const theirs = await betterAuth(withCookie(cookie))
    expect(ours?.user).toMatchObject({ id: user.userId, email: user.email, role: 'expert', disabled: false })
    expect(ours?.session.id).toBe(theirs?.session.id)
    expect(ours?.user.id).toBe(theirs?.user.id)
  })

  it('refuses a cookie whose signature is not the app’s, as better-auth does', async () => {
    const { token } = await signedIn()
    const forged = `${NAME}=${encodeURIComponent(`${token}.${'A'.repeat(43)}=`)}`
    expect(await readSession(withCookie(forged))).toBeNull()
    expect(await betterAuth(withCookie(forged))).toBeNull()
    // An unsigned token and a cookie of another name are nobody either.
    expect(await readSession(withCookie(`${NAME}=${token}`))).toBeNull()
    expect(await readSession(withCookie(`other=${token}`))).toBeNull()
    expect(await readSession(new Headers())).toBeNull()
  })

  it('checks signatures as better-call makes them (HMAC-SHA256, base64)', () => {
    // better-call signs "abc" under "secret" with the base64 HMAC-SHA256, as openssl computes it.
    const sig = 'mUba1OAOkT/Ivo5dP34RCkqegy+D+wnDRShdeGONig4=' // openssl dgst -sha256 -hmac secret -binary | base64
    expect(verifiedToken(`abc.${sig}`, 'secret')).toBe('abc')
    expect(verifiedToken(`abd.${sig}`, 'secret')).toBeNull()
    expect(verifiedToken(`abc.${sig}`, 'other')).toBeNull()
    expect(verifiedToken('abc', 'secret')).toBeNull()
  })

  it('is nobody after sign-out (the session row is gone)', async () => {
    const { cookie, token } = await signedIn()
    expect(await readSession(withCookie(cookie))).not.toBeNull()
    await db.session.delete({ where: { token } })
    expect(await readSession(withCookie(cookie))).toBeNull()
  })

  it('hands an expired session to better-auth, which deletes it', async () => {
    const { cookie, token } = await signedIn()
    await db.session.update({ where: { token }, data: { expiresAt: new Date(Date.now() - 1000) } })
    expect(await readSession(withCookie(cookie))).toBeNull()
    expect(await db.session.count({ where: { token } })).toBe(0)
  })

  it('hands a session past its update age to better-auth, which extends it', async () => {
    const { user, cookie, token } = await signedIn()
    const soon = new Date(Date.now() + 60_000)
    await db.session.update({ where: { token }, data: { expiresAt: soon } })
    const read = await readSession(withCookie(cookie))
    expect(read?.user.id).toBe(user.userId)
    const row = await db.session.findUniqueOrThrow({ where: { token } })
    expect(row.expiresAt.getTime()).toBeGreaterThan(soon.getTime() + 3600_000)
  })

  it('a disabled account acts as nobody', async () => {
    const { user: other, cookie } = await signedIn()
    expect((await sessionActor(withCookie(cookie)))?.userId).toBe(other.userId)
    await db.user.update({ where: { id: other.userId }, data: { disabled: true } })
    expect(await sessionActor(withCookie(cookie))).toBeNull()
  })
})

describe("PXP's molecule drawings (GET /api/v1/pxp/molecules, the plugin's endpoint)", () => {
  let cookie: string
  beforeAll(async () => {
    const user = await makeUser('annotator', PASSWORD)
    cookie = (await signIn(user.email)).cookie
  })
  const get = (query: string, headers: Record<string, string> = { cookie }) =>
    restGET(new Request(`http://127.0.0.1:3000/api/v1/pxp/molecules?${query}`, { headers }))

  it('draws a SMILES for a signed-in person, as an inert SVG the browser keeps', async () => {
    const res = await get('smiles=CCOC(C)%3DO&size=lg')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
    expect(res.headers.get('cache-control')).toMatch(/private, max-age=\d+, immutable/)
    expect(res.headers.get('content-security-policy')).toContain('sandbox')
    const svg = await res.text()
    expect(svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/)
    expect(svg).toContain("width='340px'")
    expect(svg).not.toMatch(/<script|onload=/i)
    const small = await (await get('smiles=CCOC(C)%3DO&size=sm')).text()
    expect(small).toContain("width='220px'")
  })

  it('asks visitors to sign in and answers bad queries with 4xx', async () => {
    expect((await get('smiles=CCO&size=lg', {})).status).toBe(401)
    expect((await get('smiles=CCO&size=huge')).status).toBe(400)
    expect((await get('size=lg')).status).toBe(400)
    expect((await get('smiles=C%00C&size=lg')).status).toBe(400)
    expect((await get(`smiles=${'C'.repeat(2001)}&size=lg`)).status).toBe(400)
    const bad = await get('smiles=not-a-molecule((&size=lg')
    expect(bad.status).toBe(422)
    expect((await bad.json()).error).toMatch(/cannot draw/)
  })
})
