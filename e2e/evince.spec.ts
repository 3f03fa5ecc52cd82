import { randomUUID } from 'node:crypto'
import type { Page } from '@playwright/test'
import { expect, test, watchCsp } from './fixtures'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { debateRules, loadDebateFixture } from '../protocols/evince/tests/support'
import { fakeConnection, signIn } from './helpers'

let fake: FakeLlmServer
let connectionName: string
const jaundice = loadDebateFixture('jaundice')
const dengue = loadDebateFixture('dengue')
const HUMAN_CASE = 'fever, rash, severe joint pain, pain behind the eyes'

test.beforeAll(async () => {
  fake = await startFakeLlmServer({
    models: ['gen-a', 'gen-b', 'judge'],
    script: [
      ...debateRules(jaundice, { latencyMs: 250 }),
      ...debateRules(dengue),
      // The LLM debater against the expert.
      {
        match: { model: 'gen-a', contains: `Round 1. Information set S (the patient's symptoms): ${HUMAN_CASE}` },
        replies: [
          {
            json: {
              predictions: [
                { label: 'Dengue Fever', probability: 0.7 },
                { label: 'Zika Virus', probability: 0.3 },
              ],
              arguments: ['retro-orbital pain'],
            },
          },
        ],
      },
      {
        match: { model: 'gen-a', contains: `Round 2. Information set S (the patient's symptoms): ${HUMAN_CASE}` },
        replies: [
          {
            json: {
              predictions: [
                { label: 'Dengue Fever', probability: 0.6 },
                { label: 'Chikungunya', probability: 0.4 },
              ],
            },
          },
        ],
      },
    ],
  })
  const id = `e2e-${randomUUID()}`
  connectionName = `fake debate ${id.slice(-6)}`
  await fakeConnection({ id, name: connectionName, baseUrl: fake.url, model: 'gen-a' })
})
test.afterAll(async () => {
  await fake.close()
})

async function openSetup(page: Page) {
  await page.goto('/runs')
  await page.getByRole('link', { name: 'New run' }).click()
  await expect(page).toHaveURL(/\/runs\/new$/)
  await page.getByRole('link', { name: /^EVINCE debate/ }).click()
  await page.getByRole('link', { name: /^Demo: / }).click()
  await expect(page.getByRole('heading', { name: 'New EVINCE debate' })).toBeVisible()
}

const connection = () => ({ label: `Connection: ${connectionName} (gen-a)` })

test('a researcher runs a debate against the fake LLM and watches it finish live, metrics charted', async ({
  page,
}) => {
  test.setTimeout(120_000)
  await signIn(page, 'researcher@parley.local')
  await openSetup(page)
  await page.getByLabel('Name').fill('Jaundice replay')
  await page.getByLabel('One case, typed in').check()
  await page.getByLabel('Symptoms (the information set S)').fill(jaundice.symptoms)
  await page.getByLabel('Ground truth (optional; never shown to the debaters)').fill('Jaundice')
  const a = page.getByRole('group', { name: 'Debater A' })
  await a.getByLabel('Model', { exact: true }).selectOption(connection())
  await a.getByLabel('Model override').fill('gen-a')
  const b = page.getByRole('group', { name: 'Debater B' })
  await b.getByLabel('Model', { exact: true }).selectOption(connection())
  await b.getByLabel('Model override').fill('gen-b')
  await page.getByLabel('Judge model (CRIT and the final report, temperature 0)').selectOption(connection())
  await page.getByLabel('Judge model override').fill('judge')
  await page.getByLabel('Max rounds').fill('3')
  // While the server works, the button is disabled: a second click cannot start a second debate.
  let release: () => void = () => {}
  const held = new Promise<void>((r) => {
    release = r
  })
  await page.route('**/runs/new/**', async (route) => {
    if (route.request().method() === 'POST') await held
    await route.continue()
  })
  await page.getByRole('button', { name: 'Start debate' }).click()
  await expect(page.getByRole('button', { name: 'Starting…' })).toBeDisabled()
  release()
  // Creating a run always lands on its run page; a one-session run links to its session there.
  await expect(page).toHaveURL(/:\d+\/runs\/[^/]+$/, { timeout: 20_000 })
  await page.getByTestId('open-single-session').click()
  await expect(page).toHaveURL(/:\d+\/sessions\/[^/]+$/)
  // Rounds arrive while the page is open (no reload), then the moderator's report.
  await expect(page.getByTestId('round-1')).toBeVisible({ timeout: 30_000 })
  await expect(page.getByTestId('stop-reason')).toHaveAttribute('data-reason', 'max-rounds', { timeout: 60_000 })
  await expect(page.getByTestId('moderator-report')).toContainText('complete blood count')
  // The recorded distributions are the paper's (Appendix C), e.g. round 1 of GPT-4 and round 3 of Claude.
  const bars = (round: number, seat: 'A' | 'B') => page.getByTestId(`turn-${round}-${seat}`).locator('li[data-label]')
  await expect(bars(1, 'A')).toHaveCount(5)
  // Bars name labels as the metrics merge them (parentheticals stripped), with the debater's spelling beside.
  await expect(bars(1, 'A').first()).toHaveAttribute('data-label', 'Hepatitis C')
  await expect(bars(1, 'A').first().locator('[data-listed-as]')).toHaveAttribute('data-listed-as', 'Hepatitis C (HCV)')
  await expect(bars(1, 'A').first()).toHaveAttribute('data-probability', '0.4')
  await expect(bars(3, 'B').nth(1)).toHaveAttribute('data-probability', '0.3')
  // The metric charts render, one per family, and the table carries the hand-checked WD of round 1.
  await expect(page.getByTestId('metric-charts').locator('figure')).toHaveCount(6)
  await expect(page.getByTestId('metric-charts').locator('svg.recharts-surface').first()).toBeVisible()
  await expect(page.getByTestId('metrics-table').locator('tr[data-round="1"]')).toHaveAttribute(
    'data-wd',
    /^0\.35(0000000000000)?\d*$/,
  )
  await expect(page.getByTestId('final-distribution').locator('li').first()).toHaveAttribute(
    'data-label',
    'Hepatitis C',
  )
  await expect(page.getByTestId('ground-truth')).toContainText('Jaundice')
  // 2.10 bits over 5 labels is high by the report prompt's own test, and the page says so too.
  await expect(page.getByText('Entropy 2.10 bits — high: collect the missing information')).toBeVisible()
  // The run page counts it.
  await page.getByRole('link', { name: /all sessions of this run/ }).click()
  await expect(page.getByTestId('run-protocol')).toHaveText('EVINCE debate')
  await expect(page.getByTestId('count-done')).toHaveText('1 / 1')
  // EVINCE has no dashboard: the run page offers none and the address answers 404.
  await expect(page.getByRole('link', { name: /dashboard/i })).toHaveCount(0)
  expect((await page.request.get(`${new URL(page.url()).pathname}/dashboard`)).status()).toBe(404)
})

test("the Dengue debate: Gemini's 95 % list is renormalised with a visible warning, and agreement stops it", async ({
  page,
}) => {
  test.setTimeout(90_000)
  await signIn(page, 'researcher@parley.local')
  await openSetup(page)
  await page.getByLabel('Name').fill('Dengue replay')
  await page.getByLabel('One case, typed in').check()
  await page.getByLabel('Symptoms (the information set S)').fill(dengue.symptoms)
  for (const [seat, model] of [
    ['A', 'gen-a'],
    ['B', 'gen-b'],
  ] as const) {
    const g = page.getByRole('group', { name: `Debater ${seat}` })
    await g.getByLabel('Model', { exact: true }).selectOption(connection())
    await g.getByLabel('Model override').fill(model)
  }
  await page.getByLabel('Judge model (CRIT and the final report, temperature 0)').selectOption(connection())
  await page.getByLabel('Judge model override').fill('judge')
  await page.getByLabel('Top-k').fill('3')
  await page.getByRole('button', { name: 'Start debate' }).click()
  // Creating a run always lands on its run page; a one-session run links to its session there.
  await expect(page).toHaveURL(/:\d+\/runs\/[^/]+$/, { timeout: 20_000 })
  await page.getByTestId('open-single-session').click()
  await expect(page).toHaveURL(/:\d+\/sessions\/[^/]+$/)
  await expect(page.getByTestId('stop-reason')).toHaveAttribute('data-reason', 'agreement', { timeout: 60_000 })
  await expect(page.getByTestId('warnings-1')).toContainText("B's probabilities sum to 0.95")
  await expect(page.getByTestId('warnings-2')).toHaveCount(0)
  await expect(page.getByTestId('metrics-table').locator('tr[data-round="3"]')).toHaveAttribute('data-wd', '0')
})

test('an expert debates an LLM in the browser, and the metrics include the expert’s distributions', async ({
  page,
  browser,
}) => {
  test.setTimeout(120_000)
  await signIn(page, 'researcher@parley.local')
  await openSetup(page)
  await page.getByLabel('Name').fill(`Expert vs model ${Date.now()}`)
  await page.getByLabel('One case, typed in').check()
  await page.getByLabel('Symptoms (the information set S)').fill(HUMAN_CASE)
  const a = page.getByRole('group', { name: 'Debater A' })
  await a.getByLabel('Model', { exact: true }).selectOption(connection())
  await a.getByLabel('Model override').fill('gen-a')
  const b = page.getByRole('group', { name: 'Debater B' })
  await b.getByLabel('A person (an expert of the study)').check()
  await b
    .getByLabel('Expert', { exact: true })
    .selectOption({ label: 'Elias Expert (chemist) (expert@parley.local, expert)' })
  await page
    .getByLabel('Judge model (CRIT and the final report, temperature 0)')
    .selectOption({ label: 'None: no CRIT scores, equal weights, no report' })
  await page.getByLabel('Top-k').fill('3')
  await page.getByLabel('Max rounds').fill('2')
  await page.getByRole('button', { name: 'Start debate' }).click()
  // Creating a run always lands on its run page; a one-session run links to its session there.
  await expect(page).toHaveURL(/:\d+\/runs\/[^/]+$/, { timeout: 20_000 })
  await page.getByTestId('open-single-session').click()
  await expect(page).toHaveURL(/:\d+\/sessions\/[^/]+$/)
  const url = page.url()

  const ctx = await browser.newContext()
  const expertCsp = await watchCsp(ctx)
  const expert = await ctx.newPage()
  await signIn(expert, 'expert@parley.local')
  // The debate turn waits in the expert's one queue.
  const sessionId = url.split('/').at(-1) as string
  await expect(async () => {
    await expert.goto('/work')
    await expect(expert.locator(`tr[data-session-id="${sessionId}"]`)).toContainText('awaiting you', { timeout: 1000 })
  }).toPass({ timeout: 30_000 })
  await expert.goto(url.replace(/^https?:\/\/[^/]+/, ''))
  const editor = expert.getByRole('table', { name: 'Your distribution' })
  await expect(editor).toBeVisible({ timeout: 30_000 })
  // The editor keeps the sum at 100%: setting one probability rescales the others.
  await expert.getByLabel('Diagnosis 1', { exact: true }).fill('Chikungunya')
  await expert.getByRole('button', { name: 'Add diagnosis' }).click()
  await expert.getByLabel('Diagnosis 2', { exact: true }).fill('Dengue Fever')
  await expert.getByLabel('Probability 2', { exact: true }).fill('40')
  await expect(expert.getByTestId('turn-total')).toHaveText('Total 100%')
  await expect(expert.getByLabel('Probability 1', { exact: true })).toHaveValue('60')
  await expert.getByLabel('Justification 1', { exact: true }).fill('the joint pain dominates')
  await expert.getByRole('button', { name: 'Send my turn' }).click()
  // The model answers round 2 and it is the expert's turn again.
  await expect(expert.getByTestId('turn-2-A').locator('li[data-label]')).toHaveCount(2, { timeout: 30_000 })
  await expert.getByLabel('Diagnosis 1', { exact: true }).fill('Dengue Fever')
  await expert.getByLabel('Diagnosis 2', { exact: true }).fill('Chikungunya')
  await expert.getByLabel('Probability 1', { exact: true }).fill('60')
  await expect(expert.getByLabel('Probability 2', { exact: true })).toHaveValue('40')
  // Enter in a field does not send a half-written turn; Ctrl+Enter does.
  await expert.getByLabel('Diagnosis 2', { exact: true }).press('Enter')
  await expert.waitForTimeout(1000)
  await expect(expert.getByText('Sent.', { exact: true })).toHaveCount(0)
  await expect(expert.getByTestId('turn-2-B')).toContainText('waiting')
  await expert.getByLabel('Justification 1', { exact: true }).press('Control+Enter')
  await expect(expert.getByTestId('stop-reason')).toHaveAttribute('data-reason', 'agreement', { timeout: 30_000 })
  // The expert's distributions are in the metrics: round 1 differs, round 2 agrees exactly.
  await expect(expert.getByTestId('turn-1-B').locator('li[data-label]').first()).toHaveAttribute(
    'data-label',
    'Chikungunya',
  )
  await expect(expert.getByTestId('metrics-table').locator('tr[data-round="2"]')).toHaveAttribute('data-wd', '0')
  await expect(expert.getByTestId('metrics-table').locator('tr[data-round="1"]')).not.toHaveAttribute('data-wd', '0')
  // The expert does not see the ground truth or the researcher's pages.
  await expect(expert.getByTestId('ground-truth')).toHaveCount(0)
  expect(expertCsp, 'Content-Security-Policy violations (expert)').toEqual([])
  await ctx.close()
})
