import { createHash } from 'node:crypto'
import { expect, test } from './fixtures'
import { mainNav, NAV, signIn, signOut, sql } from './helpers'

for (const [email, links] of Object.entries(NAV)) {
  test(`${email.split('@')[0]} signs in and sees the right navigation`, async ({ page }) => {
    await signIn(page, email)
    await expect(mainNav(page)).toHaveText(links)
    await signOut(page)
  })
}

test('a wrong password shows a clear error and keeps the user on sign-in', async ({ page }) => {
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill('expert@parley.local')
  await page.getByLabel('Password').fill('not-the-password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('alert').filter({ hasText: /Wrong email or password/ })).toBeVisible()
  await expect(page).toHaveURL(/\/sign-in/)
})

test('a malformed email is flagged on the field', async ({ page }) => {
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill('not an email')
  await page.getByLabel('Password').fill('whatever')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByText('Enter a valid email address.').first()).toBeVisible()
})

test('a visitor without a session is sent to sign-in and comes back after', async ({ page }) => {
  await page.goto('/studies/demo-study')
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fstudies%2Fdemo-study/)
  await page.getByLabel('Email').fill('researcher@parley.local')
  await page.getByLabel('Password').fill('parley-demo')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page).toHaveURL(/\/studies\/demo-study$/)
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Demo')
})

test('an expired session sends the user to sign-in', async ({ page }) => {
  await signIn(page, 'annotator@parley.local')
  await page.goto('/work')
  await expect(page.getByRole('heading', { name: 'My work' })).toBeVisible()
  const cookies = await page.context().cookies()
  const token = cookies.find((c) => c.name.endsWith('better-auth.session_token'))?.value
  expect(token).toBeTruthy()
  const sessionToken = decodeURIComponent(token as string).split('.')[0]
  const updated = await sql(
    `UPDATE session SET "expiresAt" = now() - interval '1 minute' WHERE token = $1 RETURNING id`,
    [sessionToken],
  )
  expect(updated).toHaveLength(1)
  await page.goto('/work')
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fwork/)
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible()
})

test('a hostile next= never takes the browser off-site, signing in or already signed in', async ({ page, baseURL }) => {
  const app = new URL(baseURL as string).origin
  // Should anything go off-site, answer it here instead of resolving a real host.
  await page.route(
    (url) => url.hostname === 'evil.host',
    (route) => route.fulfill({ status: 200, body: 'evil' }),
  )
  await page.goto('/sign-in?next=/%09/evil.host')
  await page.getByLabel('Email').fill('viewer@parley.local')
  await page.getByLabel('Password').fill('parley-demo')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible()
  expect(new URL(page.url()).origin).toBe(app)
  for (const next of ['/%09/evil.host', '//evil.host', '/%5Cevil.host', 'https://evil.host/', '/.//evil.host']) {
    await page.goto(`/sign-in?next=${next}`)
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible()
    expect(new URL(page.url()).origin, next).toBe(app)
  }
})

test('sign-in attempts are counted under the socket address, never a forged forwarded header', async ({
  page,
  request,
}) => {
  const key = (s: string) => createHash('sha256').update(s).digest('hex')
  const count = async (k: string) =>
    (await sql<{ attempts: number }>('SELECT attempts FROM "SignInLimit" WHERE key = $1', [key(k)]))[0]?.attempts ?? 0
  const forged = ['client:203.0.113.66', 'client:203.0.113.67', 'client:203.0.113.68']
  // A fresh window for this client, so that the count below is this test's attempts only.
  await sql(`UPDATE "SignInLimit" SET attempts = 0, "windowStart" = now() WHERE key = $1`, [key('client:127.0.0.1')])
  const email = `nobody-${Date.now()}@parley.local`
  // REST, with a forged X-Forwarded-For, X-Real-IP and even the header the server writes itself.
  const res = await request.post('/api/auth/sign-in/email', {
    headers: { 'x-forwarded-for': '203.0.113.66', 'x-real-ip': '203.0.113.66', 'x-parley-peer': '203.0.113.67' },
    data: { email, password: 'wrong password' },
  })
  expect(res.status()).toBe(401)
  // The sign-in page (server action), with a forged X-Forwarded-For.
  await page.setExtraHTTPHeaders({ 'x-forwarded-for': '203.0.113.68' })
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill('wrong password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('alert').filter({ hasText: /Wrong email or password/ })).toBeVisible()

  expect(await count(`email:${email}`)).toBe(2)
  expect(await count('client:127.0.0.1')).toBe(2)
  for (const k of forged) expect(await count(k), k).toBe(0)
})
