import { expect, test } from './fixtures'
import fc from 'fast-check'
import { PASSWORD, signIn, sql } from './helpers'

test('health checks the database; the OpenAPI document lists every route', async ({ request }) => {
  const health = await request.get('/api/v1/health')
  expect(health.status()).toBe(200)
  expect(await health.json()).toMatchObject({ status: 'ok', database: 'ok' })
  const doc = await (await request.get('/api/v1/openapi.json')).json()
  expect(doc.openapi).toBe('3.1.0')
  expect(Object.keys(doc.paths).sort()).toEqual(
    [
      '/audit',
      '/connections',
      '/connections/{connectionId}',
      '/datasets',
      '/datasets/{datasetId}/import',
      '/health',
      '/labelling/session-imports',
      '/me',
      '/metrics',
      '/mint/branches',
      '/mint/results-imports',
      '/pxp/molecules',
      '/ready',
      '/rehac/policies/train',
      '/runs',
      '/runs/{runId}',
      '/runs/{runId}/cancel',
      '/runs/{runId}/claim-next',
      '/runs/{runId}/dashboard',
      '/runs/{runId}/export',
      '/runs/{runId}/files/{file}',
      '/runs/{runId}/pause',
      '/runs/{runId}/results',
      '/runs/{runId}/resume',
      '/runs/{runId}/retry-stalled',
      '/runs/{runId}/start',
      '/scorekeeping/datasets',
      '/sessions',
      '/sessions/{sessionId}',
      '/sessions/{sessionId}/claim',
      '/sessions/{sessionId}/lease',
      '/sessions/{sessionId}/turns',
      '/studies',
      '/studies/{studyId}',
      '/studies/{studyId}/runs/import',
      '/studies/{studyId}/seats',
      '/work',
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
    '/api/v1/studies/x/seats',
    '/api/v1/studies/%00',
    '/api/v1/studies/%ED%A0%80',
    '/api/v1/studies/%E0%A4%A/seats',
    '/api/v1/studies?q=%00',
    '/api/assets/%00/x',
    '/api/experiments/%FF/export',
    '/api/live?topic=%00',
  ]
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...routes),
      fc.constantFrom('GET', 'POST'),
      fc.oneof(
        fc.string({ maxLength: 100 }),
        fc.json(),
        fc.constantFrom('{"name":"\\u0000"}', '{"name":"\\udfff"}', `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`),
      ),
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

/** Percent-encodings that are not UTF-8 (a cut sequence, an encoded surrogate, an overlong '/', 0xFF). */
const BAD_ENCODINGS = ['%E0%A4%A', '%ED%A0%80', '%C0%AF', '%FF']

test('U+0000, encoded surrogates and bad percent-encoding in any path or query are 400s, never 500s', async ({
  page,
}) => {
  await signIn(page, 'admin@parley.local')
  const paths = [
    '/api/v1/studies/{x}',
    '/api/v1/studies/{x}/seats',
    '/api/v1/studies?q={x}',
    '/api/v1/audit?q={x}',
    '/api/assets/{x}/x.png',
    '/api/assets/x/{x}',
    '/api/experiments/{x}/export?table=m&format=csv',
    '/api/experiments/x/export?table={x}',
    '/api/debates/{x}/export?table=rounds',
    '/api/live?topic=session:{x}',
    '/studies/{x}',
    '/experiments/{x}',
    '/studies?tab={x}',
  ]
  for (const p of paths) {
    for (const x of ['%00', 'a%00b', ...BAD_ENCODINGS]) {
      const url = p.replace('{x}', x)
      const res = await page.request.get(url, { maxRedirects: 0 })
      // A query's bad percent-encoding decodes leniently (U+FFFD), so it may be an ordinary answer;
      // a NUL anywhere and a bad path segment are always refused.
      if (x.includes('%00') || !p.includes('?')) expect(res.status(), url).toBe(400)
      else expect(res.status(), url).toBeLessThan(500)
    }
  }
  // The asset route decodes the name once more: '%25E0' reaches it as '%E0'.
  expect((await page.request.get('/api/assets/x/%25E0')).status()).toBe(400)
})

test('JSON bodies with \\u0000, unpaired surrogates or 20,000 levels of nesting are 400s', async ({
  page,
  baseURL,
}) => {
  await signIn(page, 'researcher@parley.local')
  // As the app's own pages send it: the cookie with this origin (the CSRF rule refuses it otherwise).
  const post = (body: string) =>
    page.request.post('/api/v1/studies', {
      headers: { 'content-type': 'application/json', origin: new URL(baseURL ?? '').origin },
      data: body,
    })
  for (const body of [
    '{"name":"a\\u0000b"}',
    '{"name":"\\ud800"}',
    '{"name":"x","\\udc00":1}',
    `{"name":"x","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
  ]) {
    const res = await post(body)
    expect(res.status(), body.slice(0, 40)).toBe(400)
    expect((await res.json()).error).toMatch(/NUL|surrogate|Nested too deeply/)
  }
  expect((await post('{"name":"Fine study"}')).status()).toBe(201)
})

test('a server action posted from another origin is refused with 403 (Next itself would answer 500)', async ({
  page,
  baseURL,
}) => {
  await page.goto('/sign-in')
  let action: { url: string; headers: Record<string, string>; body: Buffer | null } | undefined
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.headers()['next-action'])
      action = { url: r.url(), headers: r.headers(), body: r.postDataBuffer() }
  })
  await page.getByLabel('Email').fill('admin@parley.local')
  await page.getByLabel('Password').fill('not the password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('alert').first()).toContainText('Wrong email or password')
  if (!action) throw new Error('the sign-in form sent no server action')
  const replay = (origin: string) =>
    page.request.fetch(action?.url ?? '', {
      method: 'POST',
      headers: { ...action?.headers, origin },
      data: action?.body ?? '',
      maxRedirects: 0,
    })
  for (const origin of ['http://evil.example', 'null', 'not a url']) {
    const res = await replay(origin)
    expect(res.status(), origin).toBe(403)
  }
  // The same request from this origin is answered as usual.
  const same = await replay(baseURL ?? '')
  expect(same.status()).toBe(200)
  expect(await same.text()).toContain('Wrong email or password')
  // A no-JavaScript form post from another origin too.
  const form = await page.request.post('/sign-in', {
    headers: { origin: 'http://evil.example' },
    multipart: { [`$ACTION_ID_${action.headers['next-action']}`]: '', email: 'a@b.c', password: 'x' },
    maxRedirects: 0,
  })
  expect(form.status()).toBe(403)
})

test('sign-in with a newline or a repeated next lands on a page, never a 500', async ({ page }) => {
  for (const next of ['%2Fstudies%0A', '%2Fstudies%0D%0ASet-Cookie%3A%20a%3Db']) {
    await page.context().clearCookies()
    await page.goto(`/sign-in?next=${next}`)
    await page.getByLabel('Email').fill('researcher@parley.local')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible()
    // Signed in already: the sign-in page redirects at once, with the same bad targets.
    const again = await page.goto(`/sign-in?next=${next}`)
    expect(again?.status()).toBeLessThan(500)
  }
  const repeated = await page.goto('/sign-in?next=/studies&next=/work')
  expect(repeated?.status()).toBeLessThan(500)
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible()
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
