import { AxeBuilder } from '@axe-core/playwright'
import type { Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

/**
 * axe-core (WCAG 2.0 and 2.1, levels A and AA) on the main pages of every demo role: no serious or
 * critical violation. axe runs inside the page through Playwright's evaluate (no inline script, no
 * eval), so the fixture's Content-Security-Policy watch stays on: a violation would fail the test.
 */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']

async function axeProblems(page: Page, path: string) {
  await page.goto(path)
  await expect(page.locator('#main')).toBeVisible()
  await page.waitForLoadState('networkidle')
  const { violations } = await new AxeBuilder({ page }).withTags(TAGS).analyze()
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      page: path,
      rule: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n')[1]?.trim() ?? ''}`),
    }))
}

async function one(text: string, params: unknown[] = []) {
  const [row] = await sql<{ id: string }>(text, params)
  if (!row) throw new Error(`nothing for ${text}`)
  return row.id
}
const runId = (name: string) => one('SELECT id FROM "Run" WHERE name = $1', [name])
const sessionOf = (email: string, protocol: string) =>
  one(
    `SELECT s.id FROM "ProtocolSession" s JOIN "SessionSeat" p ON p."sessionId" = s.id
     JOIN "user" u ON u.id = p."userId" WHERE u.email = $1 AND s.protocol = $2 ORDER BY s."createdAt" LIMIT 1`,
    [email, protocol],
  )

/** The main pages of each role (ids looked up in the demo data). */
async function pagesOf(email: string): Promise<string[]> {
  const rad = await runId('Demo RAD: simulated model vs the ground truth, R = 2')
  const debates = await runId('Demo debates: simulated A (T=0.2) vs B (T=1.0)')
  const game = await runId('Demo game: the simulated model answers')
  const radSession = await one('SELECT id FROM "ProtocolSession" WHERE "runId" = $1 ORDER BY position LIMIT 1', [rad])
  const call = await one(`SELECT id FROM "LlmCall" WHERE "sessionRef" = $1 ORDER BY "createdAt" LIMIT 1`, [radSession])
  const research = [
    '/studies',
    '/studies/demo-study',
    '/runs',
    `/runs/${rad}`,
    `/runs/${rad}/dashboard`,
    `/runs/${debates}`,
    `/runs/${game}/dashboard`,
    `/runs/compare?a=${rad}`,
  ]
  switch (email) {
    case 'admin@parley.local':
      return ['/work', '/admin/users', '/admin/audit', '/admin/prices', '/connections', '/calls', '/settings']
    case 'researcher@parley.local':
      return [
        '/work',
        ...research,
        '/runs/new',
        '/runs/new/pxp?studyId=demo-study',
        `/runs/${rad}/sessions/${radSession}`,
        `/calls/${call}`,
        '/presets',
        '/datasets/demo-rad',
      ]
    case 'expert@parley.local':
      return ['/work', `/sessions/${await sessionOf(email, 'pxp')}`, '/settings']
    case 'expert2@parley.local':
      return [`/sessions/${await sessionOf(email, 'evince')}`, `/sessions/${await sessionOf(email, 'pxp')}`]
    case 'annotator@parley.local':
      return ['/work', '/settings']
    default:
      return research
  }
}

for (const email of [
  'admin@parley.local',
  'researcher@parley.local',
  'expert@parley.local',
  'expert2@parley.local',
  'annotator@parley.local',
  'viewer@parley.local',
]) {
  test(`axe (WCAG 2.1 AA): no serious or critical violation on the main pages of ${email}`, async ({ page }) => {
    test.setTimeout(180_000)
    await signIn(page, email)
    const problems = []
    for (const path of await pagesOf(email)) problems.push(...(await axeProblems(page, path)))
    expect(problems).toEqual([])
  })
}

test('axe on the pages before signing in: sign-in and a spent reset link', async ({ page }) => {
  const problems = [
    ...(await axeProblems(page, '/sign-in')),
    ...(await axeProblems(page, '/reset-password/no-such-token-no-such-token')),
  ]
  expect(problems).toEqual([])
})
