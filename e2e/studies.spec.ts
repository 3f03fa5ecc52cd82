import { expect, test } from './fixtures'
import { signIn, signOut } from './helpers'

test('a researcher creates a study, adds an expert, assigns work; the expert completes it', async ({ page }) => {
  const name = `Radiology pilot ${Date.now()}`
  // An expert account of its own, so other specs' expectations about the demo expert's queue hold.
  const expertEmail = `pilot-expert-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  await page.goto('/admin/users')
  const userForm = page.locator('form', { has: page.getByRole('button', { name: 'Create user' }) })
  await userForm.getByLabel('Name').fill('Pia Pilot')
  await userForm.getByLabel('Email').fill(expertEmail)
  await userForm.getByLabel('Role').selectOption('expert')
  await userForm.getByLabel('Initial password').fill('pilot password')
  await userForm.getByRole('button', { name: 'Create user' }).click()
  await expect(page.getByRole('status')).toContainText('Created')
  await signOut(page)

  await signIn(page, 'researcher@parley.local')
  await page.goto('/studies/new')
  await page.getByRole('button', { name: 'Create study' }).click()
  await expect(page.getByText('Give the study a name.', { exact: true })).toBeVisible()
  await page.getByLabel('Name').fill(name)
  await page.getByLabel('Description').fill('Does the model explain its reads?')
  await page.getByLabel('Protocol').selectOption('pxp')
  await page.getByRole('button', { name: 'Create study' }).click()
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name)

  const memberForm = page.locator('form', { has: page.getByRole('button', { name: 'Add member' }) })
  await memberForm.getByLabel("Member's email").fill('nobody@parley.local')
  await memberForm.getByRole('button', { name: 'Add member' }).click()
  await expect(memberForm.getByRole('alert')).toContainText('No account has the email nobody@parley.local')
  await memberForm.getByLabel("Member's email").fill(expertEmail)
  await memberForm.getByRole('button', { name: 'Add member' }).click()
  await expect(memberForm.getByRole('status')).toContainText('Member added.')

  const assignForm = page.locator('form', { has: page.getByRole('button', { name: 'Assign' }) })
  await assignForm.getByLabel('Assign to').selectOption({ label: `Pia Pilot (${expertEmail})` })
  await assignForm.getByLabel('Title').fill('Read 10 chest X-rays')
  await assignForm.getByRole('button', { name: 'Assign' }).click()
  await expect(assignForm.getByRole('status')).toContainText('Assigned')
  await signOut(page)

  await signIn(page, expertEmail, 'pilot password')
  await page.goto('/work')
  await page.getByRole('link', { name: 'Read 10 chest X-rays' }).click()
  await expect(page.getByRole('heading', { name: 'Read 10 chest X-rays' })).toBeVisible()
  await page.getByRole('button', { name: 'Mark done' }).click()
  await expect(page.getByRole('status')).toContainText('You marked this done.')
  await page.goto('/work?status=done')
  await expect(page.getByRole('link', { name: 'Read 10 chest X-rays' })).toBeVisible()
})

test('settings: a user creates an API key and calls the REST API with it', async ({ page, request }) => {
  await signIn(page, 'viewer@parley.local')
  await page.goto('/settings')
  await page.getByLabel('Key name').fill('dashboard export')
  await page.getByRole('button', { name: 'Create API key' }).click()
  const key = (await page.getByTestId('new-api-key').textContent())?.trim() ?? ''
  expect(key).toMatch(/^pk_[0-9a-f]{8}_/)
  const res = await request.get('/api/v1/studies', { headers: { authorization: `Bearer ${key}` } })
  expect(res.status()).toBe(200)
  const body = await res.json()
  expect(body.items.map((s: { id: string }) => s.id)).toContain('demo-study')
  // A viewer's key cannot create studies.
  const post = await request.post('/api/v1/studies', {
    headers: { authorization: `Bearer ${key}` },
    data: { name: 'nope' },
  })
  expect(post.status()).toBe(403)
  // After a reload the key is no longer shown anywhere in the page.
  await page.reload()
  expect(await page.content()).not.toContain(key)
})
