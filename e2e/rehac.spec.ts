import { randomUUID } from 'node:crypto'
import type { Page } from '@playwright/test'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { expect, test } from './fixtures'
import { fakeConnection, signIn, signOut, sql } from './helpers'

/**
 * ReHAC in the browser (issue 24): a researcher sets up an episode whose decider is the `schedule`
 * program (the annotator at steps 1 and 3, the agent at step 2), the annotator takes both human steps
 * with the keyboard (Search, then Finish) while the agent, on the fake LLM, acts between them, and the
 * researcher sees the trajectory and its reward.
 */
let fake: FakeLlmServer
let connectionName: string

test.beforeAll(async () => {
  fake = await startFakeLlmServer({
    models: ['gen'],
    script: [
      // The agent's step 2, after the annotator's Search: it looks the designer up on the page.
      {
        match: { model: 'gen', contains: 'Observation 1:' },
        replies: [{ text: 'Thought 2: The page should say who designed it.\nAction 2: Lookup[designed]' }],
      },
    ],
  })
  const id = `e2e-${randomUUID()}`
  connectionName = `fake rehac ${id.slice(-6)}`
  await fakeConnection({ id, name: connectionName, baseUrl: fake.url, model: 'gen' })
})
test.afterAll(async () => {
  await fake.close()
})

/** The step form's Thought for step t, then the keyboard: Alt+S/F picks the action and focuses its argument. */
async function writeStep(page: Page, t: number, thought: string, key: 'Alt+S' | 'Alt+F', arg: string) {
  await expect(page.getByRole('heading', { name: `Your step ${t} (of at most 7)` })).toBeVisible({ timeout: 30_000 })
  const box = page.getByLabel(`Thought ${t}`)
  await box.click()
  await box.fill(thought)
  await page.keyboard.press(key)
  const argLabel = key === 'Alt+S' ? 'Entity' : 'Answer'
  await expect(page.getByLabel(argLabel)).toBeFocused()
  await page.keyboard.type(arg)
}

test('an annotator takes two steps of a live episode by keyboard, the agent acts between, the researcher sees the reward', async ({
  page,
}) => {
  test.setTimeout(150_000)
  const name = `ReHAC by keyboard ${Date.now()}`

  // The researcher sets the episode up on the ReHAC form: one demo question, the schedule h-a-h.
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs/new/rehac?studyId=demo-study')
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
  const sets = page.getByLabel('Task set')
  await sets.selectOption((await sets.locator('option', { hasText: 'Velmora questions' }).getAttribute('value')) ?? '')
  await page.getByLabel('Only the first N tasks (optional)').fill('1')
  const decider = page.getByRole('group', { name: 'Decider (who acts)' })
  await decider.getByLabel('The program "schedule"').check()
  await page.getByLabel('Who acts at steps 1, 2, … (h human, a agent)').fill('hah')
  const agent = page.getByRole('group', { name: 'Agent' })
  await agent.getByLabel('Model', { exact: true }).selectOption({ label: `Connection: ${connectionName} (gen)` })
  const human = page.getByRole('group', { name: 'Human' })
  await human.getByLabel('A person of the study').check()
  const person = human.getByLabel('Person', { exact: true })
  await person.selectOption(
    (await person.locator('option', { hasText: 'annotator@parley.local' }).first().getAttribute('value')) ?? '',
  )
  await page.getByRole('button', { name: 'Create run' }).click()
  await expect(page).toHaveURL(/\/runs\/[^/]+$/, { timeout: 30_000 })
  const [session] = await sql<{ id: string }>(
    `SELECT s.id FROM "ProtocolSession" s JOIN "Run" r ON r.id = s."runId" WHERE r.name = $1`,
    [name],
  )
  expect(session).toBeDefined()
  await signOut(page)

  // The annotator finds the step in My work and writes it with the keyboard.
  await signIn(page, 'annotator@parley.local')
  await page.goto('/work')
  await page.locator(`a[href="/sessions/${session?.id}"]`).first().click()
  await expect(page.getByTestId('rehac-question')).toContainText('lighthouse')
  await writeStep(page, 1, 'The lighthouse at the mouth of the Ostrin has a page.', 'Alt+S', 'Calder Lighthouse')
  // Run (Alt+R) shows the Observation before anything is sent: the log does not grow.
  const logged = async () =>
    (
      await sql<{ n: number }>('SELECT count(*)::int AS n FROM "ProtocolMessage" WHERE "sessionId" = $1', [session?.id])
    )[0]?.n
  const before = await logged()
  await page.keyboard.press('Alt+R')
  await expect(page.getByRole('region', { name: 'Observation (preview, not sent)' })).toContainText(
    'designed by the architect Halvard Brenn',
  )
  expect(await logged()).toBe(before)
  await page.keyboard.press('Control+Enter')

  // The agent's Lookup arrives on the open page, then the annotator's second step is due.
  const history = page.getByTestId('rehac-history-step')
  await expect(history.nth(1)).toContainText('Lookup[designed]', { timeout: 30_000 })
  await expect(history.nth(1)).toContainText('Agent')
  await writeStep(page, 3, 'The Lookup names the architect.', 'Alt+F', 'Halvard Brenn')
  await page.keyboard.press('Control+Enter')
  await expect(page.getByTestId('rehac-step')).toHaveText('Ended after step 3', { timeout: 30_000 })
  await signOut(page)

  // The researcher reads the trajectory and its reward: T = 100, C = 2 of 3, R = 1 − 0.08·2 = 84.
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/sessions/${session?.id}`)
  const steps = page.getByTestId('rehac-history-step')
  await expect(steps).toHaveCount(3)
  await expect(steps.nth(0)).toContainText('Human')
  await expect(steps.nth(0)).toContainText('Search[Calder Lighthouse]')
  await expect(steps.nth(2)).toContainText('Finish[Halvard Brenn]')
  const result = page.getByTestId('rehac-result')
  await expect(result).toContainText('Halvard Brenn')
  await expect(result.locator('div', { hasText: 'T (F1, ×100)' }).locator('dd')).toHaveText('100.0')
  await expect(result.locator('div', { hasText: 'C (human steps)' }).locator('dd')).toHaveText('2 of 3')
  await expect(result.locator('div', { hasText: 'R = T − λC' }).locator('dd')).toHaveText('84.0')
})
