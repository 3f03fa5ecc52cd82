import { expect, type Page } from '@playwright/test'
import pg from 'pg'

export const PASSWORD = 'parley-demo'

export async function signIn(page: Page, email: string, password = PASSWORD) {
  await page.goto('/sign-in')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible()
}

export async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click()
  await expect(page).toHaveURL(/\/sign-in/)
}

/** Direct SQL against the e2e database, for setting up situations (e.g. an expired session). */
export async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    return (await client.query(text, params)).rows as T[]
  } finally {
    await client.end()
  }
}

export function mainNav(page: Page) {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link')
}

/** What each demo role sees in the main navigation, written out by hand. */
export const NAV: Record<string, string[]> = {
  'admin@parley.local': [
    'My work',
    'Studies',
    'Runs',
    'Models',
    'Model presets',
    'Calls',
    'Users',
    'Prices',
    'Audit log',
    'Settings',
  ],
  'researcher@parley.local': ['My work', 'Studies', 'Runs', 'Models', 'Model presets', 'Calls', 'Settings'],
  'expert@parley.local': ['My work', 'Settings'],
  'annotator@parley.local': ['My work', 'Settings'],
  'viewer@parley.local': ['Studies', 'Runs', 'Settings'],
}
