import { expect, type Page } from '@playwright/test'
import pg from 'pg'
import { randomUUID } from 'node:crypto'

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

/**
 * An LLM connection of the demo study to a test's own server (the fake OpenAI-compatible one, or a
 * closed port), inserted directly so the spec need not click through the settings. Returns its id.
 */
export async function fakeConnection(c: {
  name: string
  baseUrl: string
  model: string
  timeoutMs?: number
  id?: string
}): Promise<string> {
  const id = c.id ?? `e2e-${randomUUID()}`
  await sql(
    `INSERT INTO "LlmConnection" (id, "studyId", name, provider, "baseUrl", "defaultModel", "timeoutMs", "updatedAt")
     VALUES ($1, 'demo-study', $2, 'openai-compatible', $3, $4, $5, now())`,
    [id, c.name, c.baseUrl, c.model, c.timeoutMs ?? 5000],
  )
  return id
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
