import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { endpoints, type Endpoint } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { db } from '@/lib/server/db'
import { execute, MAX_INPUT_BYTES } from '@/lib/server/operation'
import { allOperations } from '@/lib/server/operations'
import { exportRoute } from '@/lib/server/api/stream'
import { DEPTH_PROBLEM, MAX_INPUT_DEPTH, TEXT_PROBLEM } from '@/lib/server/input'
import { DEMO_CONNECTION_ID, ensureDemoConnection } from '@/lib/server/llm/runtime'
import { createApiKey } from '@/lib/server/services/api-keys'
import { createPreset } from '@/lib/server/services/presets'
import { exportRun } from '@/lib/server/services/run-export'
import { makeStudy, makeUser } from '../support/fixtures'

/** The generic operations and every protocol's own (loaded from its `ops` capability). */
const OPERATIONS = await allOperations()

afterAll(() => db.$disconnect())

/** Text PostgreSQL refuses or that is not text at all: U+0000 and unpaired surrogates, anywhere. */
const badText = fc
  .tuple(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('\u0000', '\ud800', '\udfff', '\udbff\u0041'),
    fc.string({ maxLength: 20 }),
  )
  .map(([a, bad, b]) => a + bad + b)

/** Every field name the operations read ids and text from, so NUL reaches the queries. */
const FIELDS = [
  'id',
  'studyId',
  'runId',
  'userId',
  'runId',
  'sessionId',
  'datasetId',
  'templateId',
  'connectionId',
  'presetId',
  'callId',
  'keyId',
  'name',
  'email',
  'q',
  'model',
  'prompt',
  'status',
  'role',
  'table',
  'format',
]

/** {a: {a: … {a: 1}}}, `depth` objects deep. */
function nested(depth: number): unknown {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

// Inputs shaped like what a browser, a script or an attacker might send.
const nasty = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), badText),
  fc.anything({ maxDepth: 3 }),
  fc.dictionary(
    fc.constantFrom(
      'name',
      'email',
      'studyId',
      'runId',
      'seat',
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

  it('U+0000 or an unpaired surrogate in any field of any operation is a 400 naming the field, never a 500', async () => {
    const admin = await makeUser('admin')
    for (const bad of ['x\u0000y', 'x\ud800', '\udc00y']) {
      const raw = Object.fromEntries(FIELDS.map((f) => [f, bad]))
      for (const op of OPERATIONS) {
        const r = await execute(op, admin, raw)
        expect(r, op.name).toMatchObject({ ok: false, status: 400, error: expect.stringContaining(TEXT_PROBLEM) })
        expect(Object.keys((r as { fieldErrors?: object }).fieldErrors ?? {})).toHaveLength(1)
      }
    }
    // Keys and nested values too, and a file's name.
    const op = OPERATIONS.find((o) => o.name === 'studies.create')!
    expect(await execute(op, admin, { name: 'ok', 'k\u0000': 1 })).toMatchObject({ status: 400 })
    expect(await execute(op, admin, { name: 'ok', tags: [{ a: ['\ud800'] }] })).toMatchObject({
      status: 400,
      error: expect.stringContaining('tags.0.a.0'),
    })
    const file = new File(['x'], 'a\u0000.csv')
    expect(await execute(op, admin, { name: 'ok', file })).toMatchObject({ status: 400 })
  })

  it('input nested deeper than the limit is a 400 before anything reads it recursively', async () => {
    const admin = await makeUser('admin')
    for (const op of OPERATIONS) {
      const r = await execute(op, admin, { name: nested(20_000) })
      expect(r, op.name).toMatchObject({ ok: false, status: 400, error: expect.stringContaining(DEPTH_PROBLEM) })
    }
    // At the limit it is the operation's schema that answers (not the depth rule).
    const r = await execute(OPERATIONS.find((o) => o.name === 'studies.create')!, admin, {
      name: 'ok',
      x: nested(MAX_INPUT_DEPTH - 1),
    })
    expect(r.ok).toBe(true)
  })

  it('a preset JSON schema nested 20,000 deep, or holding \\u0000, is a field error (was a stack overflow / 500)', async () => {
    const admin = await makeUser('admin')
    await ensureDemoConnection()
    const preset = (jsonSchema: string) =>
      execute(createPreset, admin, {
        name: 'deep',
        connectionId: DEMO_CONNECTION_ID,
        model: 'demo',
        responseFormat: 'json_schema',
        jsonSchema,
      })
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`
    expect(await preset(deep)).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { jsonSchema: [expect.stringContaining(DEPTH_PROBLEM)] },
    })
    expect(await preset('{"type":"object","description":"a\\u0000b"}')).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { jsonSchema: [expect.stringContaining(TEXT_PROBLEM)] },
    })
    expect(await preset('{"type":"object"}')).toMatchObject({ ok: true })
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

  it('U+0000 and surrogates in path params, queries and bodies, and deep bodies, are 400s', async () => {
    const admin = await makeUser('admin')
    const created = await execute(createApiKey, admin, { name: 'nul' })
    if (!created.ok) throw new Error(created.error)
    const headers = { authorization: `Bearer ${created.data.key}`, 'content-type': 'application/json' }
    const expect400 = async (res: Response) => {
      expect(res.status).toBe(400)
      expect((await res.json()).error).toMatch(/NUL|surrogate|Nested too deeply/)
    }
    await expect400(await call(endpoints.getStudy, { headers, params: { studyId: 'x\u0000' } }))
    await expect400(await call(endpoints.getStudy, { headers, params: { studyId: '\ud800' } }))
    await expect400(await call(endpoints.listStudies, { headers, path: '/studies?q=%00' }))
    await expect400(await call(endpoints.listAudit, { headers, path: '/audit?q=a%00' }))
    await expect400(await call(endpoints.createStudy, { method: 'POST', headers, body: '{"name":"a\\u0000b"}' }))
    await expect400(await call(endpoints.createStudy, { method: 'POST', headers, body: '{"name":"\\ud800"}' }))
    await expect400(
      await call(endpoints.createStudy, {
        method: 'POST',
        headers,
        body: `{"name":"x","d":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
      }),
    )
  })

  it('the export route answers 400 for U+0000 in the run id or the query', async () => {
    const admin = await makeUser('admin')
    await makeStudy(admin)
    const created = await execute(createApiKey, admin, { name: 'export' })
    if (!created.ok) throw new Error(created.error)
    const headers = { authorization: `Bearer ${created.data.key}` }
    for (const op of [exportRun]) {
      const get = exportRoute(op)
      for (const [runId, qs] of [
        ['x\u0000', 'table=m&format=csv'],
        ['\udc00', ''],
        ['x', 'format=csv%00'],
      ] as const) {
        const res = await get(new Request(`http://parley.test/api/x/export?${qs}`, { headers }), {
          params: Promise.resolve({ runId }),
        })
        expect(res.status, `${op.name} ${JSON.stringify(runId)} ${qs}`).toBe(400)
      }
    }
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
        fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.oneof(fc.string({ maxLength: 30 }), badText)),
        fc.oneof(fc.string({ maxLength: 40 }), badText),
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
