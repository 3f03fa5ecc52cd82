import { expect, test } from './fixtures'
import { mainNav, NAV, sql } from './helpers'

test('with no admin, sign-in leads to the one-time setup page, which then disappears', async ({ page }) => {
  const admins = await sql<{ id: string }>(`UPDATE "user" SET role = 'viewer' WHERE role = 'admin' RETURNING id`)
  const email = `first-admin-${Date.now()}@parley.local`
  try {
    await page.goto('/sign-in')
    await expect(page).toHaveURL(/\/setup$/)
    await page.getByLabel('Your name').fill('First Admin')
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('short')
    await page.getByRole('button', { name: 'Create admin account' }).click()
    await expect(page.getByText('Use at least 8 characters.', { exact: true })).toBeVisible()
    await page.getByLabel('Password').fill('first admin password')
    await page.getByRole('button', { name: 'Create admin account' }).click()
    await expect(mainNav(page)).toHaveText(NAV['admin@parley.local'] as string[])
    const res = await page.goto('/setup')
    expect(res?.status()).toBe(404)
  } finally {
    await sql(`DELETE FROM "user" WHERE email = $1`, [email])
    await sql(`UPDATE "user" SET role = 'admin' WHERE id = ANY($1)`, [admins.map((a) => a.id)])
  }
})
