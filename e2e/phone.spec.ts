import type { Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { PASSWORD, sql } from './helpers'

/** A phone held upright (390 × 844, an iPhone 12–15): the pages fit its width, the menu folds away. */
test.use({ viewport: { width: 390, height: 844 } })

async function signInOnPhone(page: Page, email: string) {
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('button', { name: 'Menu' })).toBeVisible()
}

/** How far the page scrolls sideways (0: it fits the screen). */
async function sideways(page: Page): Promise<number> {
  await page.waitForLoadState('networkidle')
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
}

async function firstId(text: string, params: unknown[]) {
  const [row] = await sql<{ id: string }>(text, params)
  if (!row) throw new Error(`nothing for ${text}`)
  return row.id
}

test('at 390 px the sidebar is folded behind a Menu button that works by keyboard', async ({ page }) => {
  await signInOnPhone(page, 'researcher@parley.local')
  await page.goto('/work')
  const nav = page.getByRole('navigation', { name: 'Main' })
  const menu = page.getByRole('button', { name: 'Menu' })
  // Folded: the page has the whole width.
  await expect(nav).toBeHidden()
  await expect(menu).toHaveAttribute('aria-expanded', 'false')
  const main = await page.locator('#main').boundingBox()
  expect(main?.width).toBe(390)

  // Tab from the top of the page reaches the button (after the skip link); Enter opens the menu.
  await page.keyboard.press('Tab')
  await page.keyboard.press('Tab')
  await page.keyboard.press('Tab')
  await expect(menu).toBeFocused()
  await page.keyboard.press('Enter')
  const close = page.getByRole('button', { name: 'Close menu' })
  await expect(close).toHaveAttribute('aria-expanded', 'true')
  await expect(nav).toBeVisible()
  // The next Tab is the first link of the menu; following a link lands on its page with the menu folded.
  await page.keyboard.press('Tab')
  await expect(nav.getByRole('link', { name: 'My work' })).toBeFocused()
  await page.keyboard.press('Tab')
  await expect(nav.getByRole('link', { name: 'Studies' })).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(page).toHaveURL(/\/studies$/)
  await expect(nav).toBeHidden()
  // Escape folds an open menu and gives the focus back to its button.
  await menu.focus()
  await page.keyboard.press('Enter')
  await expect(nav).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(nav).toBeHidden()
  await expect(menu).toBeFocused()
})

test('at 390 px My work, a session and a dashboard fit the screen: nothing scrolls sideways', async ({ page }) => {
  await signInOnPhone(page, 'expert@parley.local')
  const session = await firstId(
    `SELECT s.id FROM "ProtocolSession" s JOIN "SessionSeat" p ON p."sessionId" = s.id
     JOIN "user" u ON u.id = p."userId" WHERE u.email = $1 AND s.protocol = 'pxp' ORDER BY s."createdAt" LIMIT 1`,
    ['expert@parley.local'],
  )
  await page.goto('/work')
  await expect(page.getByRole('heading', { name: 'My work' })).toBeVisible()
  expect(await sideways(page)).toBe(0)
  await page.goto(`/sessions/${session}`)
  await expect(page.getByRole('heading', { name: 'The dialogue' })).toBeVisible()
  expect(await sideways(page)).toBe(0)

  await page.getByRole('button', { name: 'Menu' }).click()
  await page.getByRole('button', { name: 'Sign out' }).click()
  await signInOnPhone(page, 'researcher@parley.local')
  const rad = await firstId('SELECT id FROM "Run" WHERE name = $1', [
    'Demo RAD: simulated model vs the ground truth, R = 2',
  ])
  await page.goto(`/runs/${rad}/dashboard`)
  await expect(page.getByRole('heading', { name: /Intelligibility \(Fig\. 4\)/ })).toBeVisible()
  expect(await sideways(page)).toBe(0)
  // The researcher's My work names protocol, seat and study in the session's cell on a phone.
  await page.goto('/work')
  expect(await sideways(page)).toBe(0)
})
