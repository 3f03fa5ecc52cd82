import { expect, test } from './fixtures'
import fc from 'fast-check'
import { signIn, sql } from './helpers'

test('health checks the database; the OpenAPI document lists every route', async ({ request }) => {
  const health = await request.get('/api/v1/health')
  expect(health.status()).toBe(200)
  expect(await health.json()).toMatchObject({ status: 'ok', database: 'ok' })
  const doc = await (await request.get('/api/v1/openapi.json')).json()
  expect(doc.openapi).toBe('3.0.3')
  expect(Object.keys(doc.paths).sort()).toEqual(
    [
      '/audit',
      '/health',
      '/me',
      '/studies',
      '/studies/{studyId}',
      '/work',
      '/work/{workId}',
      '/work/{workId}/complete',
    ].sort(),
  )
  // Every $ref points at a schema that exists.
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1])
  for (const r of refs) expect(doc.components.schemas[r as string], r).toBeTruthy()
  expect(doc.paths['/studies'].post.requestBody.content['application/json'].schema.required).toEqual(['name'])
})

test('unknown API routes are JSON 404s', async ({ request }) => {
  const res = await request.get('/api/v1/nope')
  expect(res.status()).toBe(404)
  expect((await res.json()).error).toMatch(/openapi\.json/)
})

test('fuzzed requests over HTTP never get a 500', async ({ request }) => {
  const routes = [
    '/api/v1/studies',
    '/api/v1/work',
    '/api/v1/audit',
    '/api/v1/me',
    '/api/v1/studies/x',
    '/api/v1/work/x/complete',
  ]
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...routes),
      fc.constantFrom('GET', 'POST'),
      fc.oneof(fc.string({ maxLength: 100 }), fc.json()),
      fc.oneof(
        fc.constant(undefined),
        fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
      ),
      async (route, method, body, authorization) => {
        const res = await request.fetch(route, {
          method,
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          ...(method === 'POST' ? { data: body } : {}),
        })
        expect(res.status()).toBeLessThan(500)
      },
    ),
    { numRuns: 60 },
  )
})

test('a page on another port of the same host cannot use the session cookie to create a study', async ({
  page,
  baseURL,
}) => {
  await signIn(page, 'researcher@parley.local')
  const name = `csrf ${Date.now()}`
  const target = `${baseURL}/api/v1/studies`
  // Same site as the app (so the SameSite=Lax cookie goes along), another origin.
  const evil = 'http://127.0.0.1:4000/evil'
  await page.route(evil, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<title>evil</title>
        <form id="f" method="POST" enctype="text/plain" action="${target}">
          <input name='{"name":"${name}","x":"' value='"}'>
        </form>
        <script>
          fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include',
            headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ name: ${JSON.stringify(name)} }) })
            .finally(() => document.getElementById('f').submit())
        </script>`,
    }),
  )
  await page.goto(evil)
  await expect(page).toHaveURL(target)
  await expect(page.locator('body')).toContainText('must come from this app')
  expect(await sql('SELECT id FROM "Study" WHERE name = $1', [name])).toHaveLength(0)
})
