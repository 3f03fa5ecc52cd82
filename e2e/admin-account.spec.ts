import { expect, test } from './fixtures'
import { signIn, signOut, sql } from './helpers'

async function createUser(page: import('@playwright/test').Page, email: string, password: string) {
  await page.goto('/admin/users')
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create user' }) })
  await form.getByLabel('Name').fill('Rita Reset')
  await form.getByLabel('Email').fill(email)
  await form.getByLabel('Initial password').fill(password)
  await form.getByRole('button', { name: 'Create user' }).click()
  await expect(page.getByRole('status')).toContainText(`Created ${email}`)
  return page.getByRole('row').filter({ has: page.getByRole('cell', { name: email, exact: true }) })
}

test('an admin issues a one-time reset link; the person sets a new password with it and is signed out elsewhere', async ({
  page,
  browser,
}) => {
  const email = `reset-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  await createUser(page, email, 'first fine password')

  // The person is signed in in another browser.
  const other = await browser.newContext()
  const theirs = await other.newPage()
  await signIn(theirs, email, 'first fine password')

  await page.goto('/admin/users')
  const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: email, exact: true }) })
  await row.getByRole('button', { name: 'Reset password' }).click()
  // The reset forms open in a row of their own under the user's, across the table.
  const panel = page.getByRole('region', { name: `Reset the password of ${email}` })
  await panel.getByRole('button', { name: 'Issue one-time reset link' }).click()
  const link = (await panel.getByTestId('reset-link').textContent()) ?? ''
  expect(link).toMatch(/\/reset-password\/[A-Za-z0-9_-]{43}$/)

  // Opened signed out (a fresh context), the link asks for the new password twice.
  const anon = await browser.newContext()
  const reset = await anon.newPage()
  await reset.goto(link)
  await expect(reset.getByText(`Choose a new password for ${email}`)).toBeVisible()
  await reset.getByLabel('New password').fill('password1')
  await reset.getByLabel('The same password again').fill('password1')
  await reset.getByRole('button', { name: 'Set new password' }).click()
  await expect(reset.getByText(/too easy to guess/).first()).toBeVisible()
  await reset.getByLabel('New password').fill('second fine password')
  await reset.getByLabel('The same password again').fill('second fine password')
  await reset.getByRole('button', { name: 'Set new password' }).click()
  await expect(reset.getByRole('status')).toContainText(`Password changed for ${email}`)

  // Signed out everywhere: the other browser is back at sign-in.
  await theirs.goto('/work')
  await expect(theirs).toHaveURL(/\/sign-in/)
  await signIn(theirs, email, 'second fine password')

  // The link works once.
  await reset.goto(link)
  await expect(reset.getByText('This reset link is expired or was already used.')).toBeVisible()
  await other.close()
  await anon.close()
})

test('an admin sets a new password directly; the audit log names people and shows the change as a diff', async ({
  page,
}) => {
  const email = `setpw-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  const row = await createUser(page, email, 'first fine password')
  await row.getByRole('button', { name: 'Reset password' }).click()
  const panel = page.getByRole('region', { name: `Reset the password of ${email}` })
  await panel.getByLabel(`New password for ${email}`).fill('brand new fine password')
  await panel.getByRole('button', { name: 'Set password' }).click()
  await expect(panel.getByRole('status')).toContainText(`New password set for ${email}`)
  await row.getByLabel(`Role of ${email}`).selectOption('viewer')
  await row.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByRole('status').filter({ hasText: 'is now viewer' })).toBeVisible()

  const [user] = await sql<{ id: string }>('SELECT id FROM "user" WHERE email = $1', [email])
  await page.goto('/admin/audit')
  // The resource types are offered as a list.
  const types = page.getByLabel('Resource type')
  await expect(types.locator('option')).toContainText(['any', 'user'])
  await types.selectOption('user')
  await page.getByRole('button', { name: 'Filter' }).click()
  await expect(page).toHaveURL(/resourceType=user/)
  const roleRow = page
    .getByRole('row')
    .filter({ hasText: 'user.update-role' })
    .filter({ hasText: 'Rita Reset' })
    .first()
  // People by name, with the id on hover.
  await expect(roleRow.locator(`[data-id="${user?.id}"]`)).toHaveText('Rita Reset')
  await expect(roleRow.getByText('Admin', { exact: false }).first()).toBeVisible()
  // before/after as a diff: the old value struck out, the new one inserted.
  await expect(roleRow.locator('del')).toHaveText('expert')
  await expect(roleRow.locator('ins')).toHaveText('viewer')
  const pwRow = page.getByRole('row').filter({ hasText: 'user.set-password' }).first()
  await expect(pwRow.locator(`[data-id="${user?.id}"]`)).toHaveText('Rita Reset')
  await signOut(page)
  await signIn(page, email, 'brand new fine password')
})

test('model presets are in the navigation and the model field offers what the connection lists', async ({ page }) => {
  await signIn(page, 'researcher@parley.local')
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Model presets' }).click()
  await expect(page.getByRole('heading', { name: 'Model presets' })).toBeVisible()
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create preset' }) })
  await form.getByLabel('Connection').selectOption({ label: 'Simulated demo model (offline)' })
  await expect(form.getByText(/models? offered by this connection/)).toBeVisible()
  const offered = await form
    .getByTestId('preset-models')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
  expect(offered.length).toBeGreaterThan(0)
  await expect(form.getByLabel('Model')).toHaveValue(offered[0] as string)
})

test('every page has a favicon, no 404', async ({ page }) => {
  const missing: string[] = []
  page.on('response', (r) => {
    if (r.status() === 404) missing.push(r.url())
  })
  await signIn(page, 'admin@parley.local')
  await page.goto('/runs')
  const res = await page.request.get('/favicon.ico')
  expect(res.status()).toBe(200)
  expect(res.headers()['content-type']).toMatch(/image/)
  expect(missing).toEqual([])
})
