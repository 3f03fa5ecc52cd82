import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { endpoints, type Endpoint } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { db } from '@/lib/server/db'
import { execute, MAX_INPUT_BYTES } from '@/lib/server/operation'
import { OPERATIONS } from '@/lib/server/operations'
import { createApiKey } from '@/lib/server/services/api-keys'
import { makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

// Inputs shaped like what a browser, a script or an attacker might send.
const nasty = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  fc.dictionary(
    fc.constantFrom(
      'name',
      'email',
      'studyId',
      'workId',
      'userId',
      'role',
      'page',
      'pageSize',
      'password',
      'q',
      'disabled',
      'protocol',
      '__proto__',
      'constructor',
    ),
    fc.anything({ maxDepth: 2 }),
  ),
  fc.record({
    name: fc.string({ maxLength: 300 }),
    email: fc.string(),
    role: fc.string(),
    page: fc.oneof(fc.integer(), fc.string(), fc.double()),
  }),
  fc.constant({ name: 'x'.repeat(MAX_INPUT_BYTES + 10) }),
)

describe('bad input to every operation gets a clear 4xx, never a 500', () => {
  it('fast-check over all operations as an admin', async () => {
    const admin = await makeUser('admin')
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...OPERATIONS), nasty, async (op, input) => {
        const r = await execute(op, admin, input)
        if (!r.ok) {
          expect(r.status).toBeGreaterThanOrEqual(400)
          expect(r.status).toBeLessThan(500)
          expect(r.error.length).toBeGreaterThan(5)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('oversized input is refused with 413 before it is parsed', async () => {
    const admin = await makeUser('admin')
    for (const op of OPERATIONS) {
      const r = await execute(op, admin, { name: 'x'.repeat(MAX_INPUT_BYTES + 1) })
      expect(r).toMatchObject({ ok: false, status: 413 })
    }
  })

  it('validation errors name the field', async () => {
    const admin = await makeUser('admin')
    const r = await execute(OPERATIONS.find((o) => o.name === 'users.create')!, admin, {
      email: 'not-an-email',
      name: 'A',
      role: 'admin',
      password: 'longenough',
    })
    expect(r).toMatchObject({ ok: false, status: 400, fieldErrors: { email: ['Enter a valid email address.'] } })
  })
})

describe('REST handlers: API keys, bad bodies, fuzzed requests', () => {
  const call = (ep: Endpoint, init: RequestInit & { path?: string; params?: Record<string, string> } = {}) =>
    handle(ep)(new Request(`http://parley.test/api/v1${init.path ?? '/x'}`, init), {
      params: Promise.resolve(init.params ?? {}),
    })

  it('an API key acts with its owner’s role; revoked and unknown keys get 401', async () => {
    const researcher = await makeUser('researcher')
    const created = await execute(createApiKey, researcher, { name: 'test' })
    if (!created.ok) throw new Error(created.error)
    const auth = { authorization: `Bearer ${created.data.key}` }
    const ok = await call(endpoints.listStudies, { headers: auth, path: '/studies?page=1' })
    expect(ok.status).toBe(200)
    const body = await ok.json()
    expect(body).toMatchObject({ page: 1, pageSize: 20 })
    // Researchers may not read the audit log, with a key or without.
    expect((await call(endpoints.listAudit, { headers: auth })).status).toBe(403)
    const me = await (await call(endpoints.me, { headers: auth })).json()
    expect(me).toMatchObject({ email: researcher.email, role: 'researcher', via: `api-key:${created.data.prefix}` })
    // The hash, not the key, is stored.
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: created.data.id } })
    expect(JSON.stringify(row)).not.toContain(created.data.key)
    await db.apiKey.update({ where: { id: created.data.id }, data: { revokedAt: new Date() } })
    expect((await call(endpoints.listStudies, { headers: auth })).status).toBe(401)
    const unknown = { authorization: `Bearer pk_00000000_${'a'.repeat(43)}` }
    expect((await call(endpoints.listStudies, { headers: unknown })).status).toBe(401)
    expect((await call(endpoints.listStudies, { headers: { authorization: 'Bearer nope' } })).status).toBe(401)
    expect((await call(endpoints.listStudies)).status).toBe(401)
  })

  it('static routes work when Next passes no params (regression: 500 on GET /studies)', async () => {
    const researcher = await makeUser('researcher')
    const created = await execute(createApiKey, researcher, { name: 'test' })
    if (!created.ok) throw new Error(created.error)
    const req = new Request('http://parley.test/api/v1/studies', {
      headers: { authorization: `Bearer ${created.data.key}` },
    })
    expect((await handle(endpoints.listStudies)(req, {})).status).toBe(200)
    expect((await handle(endpoints.listStudies)(req, { params: Promise.resolve(undefined) })).status).toBe(200)
  })

  it('malformed JSON is a 400, an oversized body a 413, a created study a 201', async () => {
    const researcher = await makeUser('researcher')
    const created = await execute(createApiKey, researcher, { name: 'test' })
    if (!created.ok) throw new Error(created.error)
    const headers = { authorization: `Bearer ${created.data.key}`, 'content-type': 'application/json' }
    const bad = await call(endpoints.createStudy, { method: 'POST', headers, body: '{"name":' })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toMatch(/not valid JSON/)
    const big = await call(endpoints.createStudy, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'x'.repeat(MAX_INPUT_BYTES) }),
    })
    expect(big.status).toBe(413)
    const good = await call(endpoints.createStudy, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Via REST' }),
    })
    expect(good.status).toBe(201)
    expect(await good.json()).toMatchObject({ name: 'Via REST', protocol: null })
  })

  it('fuzzed bodies, queries and path params never produce a 500', async () => {
    const admin = await makeUser('admin')
    const created = await execute(createApiKey, admin, { name: 'fuzz' })
    if (!created.ok) throw new Error(created.error)
    const headers = { authorization: `Bearer ${created.data.key}`, 'content-type': 'application/json' }
    const eps = Object.values(endpoints) as Endpoint[]
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...eps),
        fc.oneof(fc.json(), fc.string({ maxLength: 200 })),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 30 })),
        fc.string({ maxLength: 40 }),
        async (ep, body, query, param) => {
          const qs = new URLSearchParams(query).toString()
          const res = await call(ep, {
            method: ep.method,
            headers,
            path: `/fuzz?${qs}`,
            params: Object.fromEntries([...ep.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1] as string, param])),
            ...(ep.method === 'GET' ? {} : { body }),
          })
          expect(res.status).toBeLessThan(500)
          const json = await res.json()
          if (res.status >= 400) expect(typeof json.error).toBe('string')
        },
      ),
      { numRuns: 200 },
    )
  })
})
