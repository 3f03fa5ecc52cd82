import { expect, test } from './fixtures'
import { signIn } from './helpers'

/**
 * ReHAC's study pages in the browser (issue 24), on the demo's finished collection tree: the method
 * comparison (Table 4 per run, Figure 2 with HIR on the bars, the λ control), a question's tree with
 * the agent and human branches side by side, training a policy from the page, and importing a file of
 * trajectories played elsewhere (a refused line named, nothing stored; then a good file as a run).
 */
test('a researcher compares ReHAC methods at two λ, opens a question’s tree and trains a policy', async ({ page }) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/studies/demo-study')
  await page.getByRole('link', { name: /Compare the \d+ ReHAC runs?/ }).click()
  await expect(page.getByRole('heading', { name: 'ReHAC method comparison' })).toBeVisible()

  const row = page.getByRole('row', { name: /Collection tree/ })
  // The demo tree: per question the paths 1, 00, 01; the simulated human is right, the demo agent wrong.
  // C = 2 human steps / 3 trajectories; T = 2/3; R = T − λC.
  await expect(row).toContainText('66.67')
  await expect(row).toContainText('61.33')
  await expect(page.getByRole('figure', { name: /R and λ·C per method at λ = 0.08/ })).toContainText('HIR 40.0')

  await page.getByRole('link', { name: '0.06', exact: true }).click()
  await expect(page).toHaveURL(/lambda=0.06/)
  await expect(page.getByRole('row', { name: /Collection tree/ })).toContainText('62.67')

  await page.goto('/studies/demo-study/p/rehac/methods?lambda=abc')
  await expect(page.getByRole('alert').filter({ hasText: 'is not allowed' })).toBeVisible()

  await page.goto('/studies/demo-study/p/rehac/methods')
  await page
    .getByRole('link', { name: /^vq09:/ })
    .first()
    .click()
  await expect(page.getByRole('heading', { name: 'ReHAC tree: vq09' })).toBeVisible()
  const forks = page.getByTestId('rehac-fork')
  await expect(forks).toHaveCount(2)
  await expect(forks.first()).toContainText('human step changed the outcome')
  await expect(page.getByRole('heading', { name: /Path “00”/ })).toBeVisible()
  await expect(page.getByRole('heading', { name: /Path “1”/ })).toBeVisible()

  await page.goto('/studies/demo-study/p/rehac/train')
  await page.getByLabel('Epochs').fill('5')
  await page.getByRole('button', { name: 'Train' }).click()
  const result = page.getByRole('region', { name: 'Training result' })
  await expect(result).toContainText('advantage rows')
  await expect(result.getByLabel(/The model/)).toHaveValue(/"kind": "rehac-logistic"/)
})

/** Two StrategyQA-style trajectories written for this test (not the released data). */
const GOOD = [
  {
    trajectory:
      'Question: Is the Kestrel Cup older than the Velmoran Football League?\n<solver> human\nThought 1: The cup came first.\nAction 1: Finish[yes]\nObservation 1: Episode finished, reward = 1\n\n',
    em: 1,
    f1: 1,
  },
  {
    trajectory:
      'Question: Was Ilsa Varkonen born before the Calder Lighthouse was completed?\n<solver> agent\nThought 1: I guess.\nAction 1: Finish[yes]\nObservation 1: Episode finished, reward = 0\n\n',
    em: 0,
    f1: 0,
  },
]
const jsonl = (rows: unknown[]) => Buffer.from(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`)

test('a researcher imports trajectories: a refused line is named and nothing is stored, then the good file is a run', async ({
  page,
}) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs?studyId=demo-study')
  await page.getByRole('link', { name: 'Import trajectories' }).click()
  const form = page.locator('form').filter({ has: page.getByLabel('File of sessions') })
  const name = `imported e2e ${Date.now()}`
  await form.getByLabel('Run name').fill(name)
  await form.getByLabel('Kind of file').selectOption({ label: 'ReHAC evaluation trajectories (QA) (rehac)' })

  // Line 2's marker names nobody: the whole file is refused, naming that line.
  const bad = [GOOD[0], { ...GOOD[1], trajectory: GOOD[1]?.trajectory.replace('<solver> agent', '<solver> nobody') }]
  await form
    .getByLabel('File of sessions')
    .setInputFiles({ name: 'bad.jsonl', mimeType: 'application/jsonl', buffer: jsonl(bad) })
  await form.getByRole('button', { name: 'Import trajectories' }).click()
  await expect(page.getByRole('alert').filter({ hasText: 'line 2' })).toBeVisible()
  await page.goto('/runs?studyId=demo-study')
  await expect(page.getByText(name)).toHaveCount(0)

  await page.getByRole('link', { name: 'Import trajectories' }).click()
  await form.getByLabel('Run name').fill(name)
  await form.getByLabel('Kind of file').selectOption({ label: 'ReHAC evaluation trajectories (QA) (rehac)' })
  await form
    .getByLabel('File of sessions')
    .setInputFiles({ name: 'good.jsonl', mimeType: 'application/jsonl', buffer: jsonl(GOOD) })
  await form.getByRole('button', { name: 'Import trajectories' }).click()
  await page.getByRole('link', { name: /imported run|open the run/i }).click()
  await expect(page.getByRole('heading', { name })).toBeVisible()

  // On the method comparison: 2 trajectories, 1 human step of 2 (HIR 50), T = 1/2.
  await page.goto('/studies/demo-study/p/rehac/methods')
  const row = page.getByRole('row', { name: new RegExp(name) })
  await expect(row).toContainText('50.00')
})
