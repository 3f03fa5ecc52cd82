import { expect, test } from './fixtures'
import { signIn } from './helpers'

const nonceOf = (csp: string) => /'nonce-([^']+)'/.exec(csp)?.[1]

test('pages carry a Content-Security-Policy with a fresh nonce that Next puts on its scripts', async ({ request }) => {
  const first = await request.get('/sign-in')
  const second = await request.get('/sign-in')
  const csp = first.headers()['content-security-policy'] ?? ''
  const directives = Object.fromEntries(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values]),
  )
  expect(directives['default-src']).toEqual(["'self'"])
  expect(directives['script-src']).toEqual(expect.arrayContaining(["'self'", "'strict-dynamic'"]))
  expect(directives['script-src']).not.toContain("'unsafe-inline'")
  expect(directives['script-src']).not.toContain("'unsafe-eval'")
  expect(directives['object-src']).toEqual(["'none'"])
  expect(directives['base-uri']).toEqual(["'self'"])
  expect(directives['frame-ancestors']).toEqual(["'none'"])
  expect(directives['form-action']).toEqual(["'self'"])
  expect(directives['img-src']).toEqual(expect.arrayContaining(["'self'", 'data:']))
  const nonce = nonceOf(csp)
  expect(nonce).toMatch(/^[A-Za-z0-9+/=]{16,}$/)
  expect(nonceOf(second.headers()['content-security-policy'] ?? '')).not.toBe(nonce)
  expect(first.headers()['referrer-policy']).toBe('strict-origin-when-cross-origin')
  expect(first.headers()['x-frame-options']).toBe('DENY')
  expect(first.headers()['x-content-type-options']).toBe('nosniff')

  const scripts = [...(await first.text()).matchAll(/<script\b[^>]*>/g)].map((m) => m[0])
  expect(scripts.length).toBeGreaterThan(0)
  for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`)
})

test('the main pages of every role render with no CSP violation', async ({ page }) => {
  const visit = async (path: string) => {
    await page.goto(path)
    await expect(page.locator('main').first()).toBeVisible()
    // Let client components hydrate and start their fetches and live streams.
    await page.waitForTimeout(300)
  }
  await visit('/sign-in')
  await signIn(page, 'admin@parley.local')
  for (const path of [
    '/',
    '/work',
    '/sessions',
    '/studies',
    '/studies/demo-study',
    '/studies/new',
    '/experiments',
    '/experiments/new',
    '/debates',
    '/debates/new',
    '/connections',
    '/connections/builtin-demo',
    '/presets',
    '/calls',
    '/admin/users',
    '/admin/prices',
    '/admin/audit',
    '/settings',
    '/studies/no-such-study',
    '/no-such-page',
  ]) {
    await visit(path)
  }
  // The playground streams a reply from the simulated model over server-sent events.
  await page.goto('/connections/builtin-demo')
  await page.locator('#pg-prompt').fill('Say hello.')
  await page.getByRole('button', { name: 'Run', exact: true }).click()
  await expect(page.getByText('simulated demo model', { exact: true })).toBeVisible({ timeout: 20_000 })
  await expect(page.getByTestId('playground-output')).not.toBeEmpty()
})

test.describe('an injected script', () => {
  test.use({ cspViolationsAllowed: true })

  test('without the nonce does not run, and the browser reports the violation', async ({ page, cspViolations }) => {
    await page.route('**/sign-in', async (route) => {
      const res = await route.fetch()
      const html = (await res.text()).replace('</body>', '<script>window.__injected = true</script></body>')
      await route.fulfill({ response: res, body: html })
    })
    await page.goto('/sign-in')
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible()
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined()
    await expect.poll(() => cspViolations.some((v) => /script-src/.test(v.text))).toBe(true)
  })
})
