import { expect, test } from './fixtures'
import { mainNav, NAV, signIn, signOut, sql } from './helpers'

test('an admin creates a user who then signs in; the audit log records it', async ({ page }) => {
  const email = `new-annotator-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  await page.goto('/admin/users')
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create user' }) })
  await form.getByLabel('Name').fill('Nora New')
  await form.getByLabel('Email').fill(email)
  await form.getByLabel('Role').selectOption('annotator')
  await form.getByLabel('Initial password').fill('short')
  await form.getByRole('button', { name: 'Create user' }).click()
  // Bad input: a clear message on the field, nothing created.
  await expect(form.getByText('Use at least 8 characters.', { exact: true })).toBeVisible()
  expect(await sql('SELECT 1 FROM "user" WHERE email = $1', [email])).toHaveLength(0)
  // Nothing typed is lost on a refused submit.
  await expect(form.getByLabel('Email')).toHaveValue(email)
  await expect(form.getByLabel('Name')).toHaveValue('Nora New')
  await form.getByLabel('Initial password').fill('a fine password')
  await form.getByRole('button', { name: 'Create user' }).click()
  await expect(page.getByRole('status')).toContainText(`Created ${email}`)
  await expect(page.getByRole('cell', { name: email, exact: true })).toBeVisible()

  await page.goto('/admin/audit?action=user.create')
  await expect(page.getByText(email).first()).toBeVisible()
  await signOut(page)

  await signIn(page, email, 'a fine password')
  await expect(mainNav(page)).toHaveText(NAV['annotator@parley.local'] as string[])
  await expect(page.getByRole('heading', { name: 'My work' })).toBeVisible()
  await expect(page.getByText('No sessions for you right now.')).toBeVisible()
})

test('a disabled user cannot sign in, and the answer does not reveal that the password was right', async ({ page }) => {
  const email = `to-disable-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  await page.goto('/admin/users')
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create user' }) })
  await form.getByLabel('Name').fill('Dee Disabled')
  await form.getByLabel('Email').fill(email)
  await form.getByLabel('Initial password').fill('a fine password')
  await form.getByRole('button', { name: 'Create user' }).click()
  await expect(page.getByRole('status')).toContainText(`Created ${email}`)
  const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: email, exact: true }) })
  await row.getByRole('button', { name: 'Disable' }).click()
  await expect(row.getByText('disabled', { exact: true })).toBeVisible()
  await signOut(page)
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill('a fine password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  const refusal = page.getByRole('alert').filter({ hasText: /Wrong email or password/ })
  await expect(refusal).toBeVisible()
  const rightPasswordAnswer = await refusal.textContent()
  await expect(page).toHaveURL(/\/sign-in/)
  await expect(page.getByRole('navigation', { name: 'Main' })).toHaveCount(0)
  // A wrong password for the same account gets exactly the same answer.
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill('not the password at all')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('alert').filter({ hasText: /Wrong email or password/ })).toHaveText(
    rightPasswordAnswer ?? '',
  )
})
