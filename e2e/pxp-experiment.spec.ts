import { execFileSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { expect, test } from './fixtures'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { PXP_DATA as DATA } from '../tests/support/shared'
import { signIn, sql } from './helpers'

let fake: FakeLlmServer

test.beforeAll(async () => {
  fake = await startFakeLlmServer({
    models: ['gen', 'judge'],
    script: [
      {
        match: { model: 'gen' },
        replies: [
          { text: 'Prediction: Atelectasis\nExplanation: Curvilinear opacities at the lung base.', latencyMs: 50 },
        ],
      },
      // The checker agrees once, then disagrees: sessions end in different ways.
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }, { text: 'No' }] },
    ],
  })
})
test.afterAll(async () => {
  await fake.close()
})

test('a researcher imports RAD, runs a proxy experiment with R = 2 live, and the dashboard equals `parley pxp stats`', async ({
  page,
}) => {
  test.setTimeout(180_000)
  await signIn(page, 'researcher@parley.local')
  // Import the released RAD data with its X-rays.
  await page.goto('/studies/demo-study')
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Import dataset' }) })
  const dataset = `RAD for experiment ${Date.now()}`
  await form.getByLabel('Dataset name').fill(dataset)
  await form.getByLabel('Kind').selectOption('rad')
  await form.getByLabel('Data file (CSV or JSONL)').setInputFiles(path.join(DATA, 'train_xray_data.csv'))
  await form
    .getByLabel('Images (RAD): files or a zip')
    .setInputFiles(readdirSync(path.join(DATA, 'xrays')).map((f) => path.join(DATA, 'xrays', f)))
  await form.getByRole('button', { name: 'Import dataset' }).click()
  await expect(page.getByRole('status').filter({ hasText: 'Imported 20 instances' })).toBeVisible({ timeout: 30_000 })

  const connectionId = `e2e-${randomUUID()}`
  const connectionName = `fake rad ${connectionId.slice(-6)}`
  await sql(
    `INSERT INTO "LlmConnection" (id, "studyId", name, provider, "baseUrl", "defaultModel", "timeoutMs", "updatedAt")
     VALUES ($1, 'demo-study', $2, 'openai-compatible', $3, 'gen', 5000, now())`,
    [connectionId, connectionName, fake.url],
  )

  // Set the experiment up in the form.
  await page.goto('/experiments')
  await page.getByRole('link', { name: 'New experiment' }).click()
  await expect(page).toHaveURL(/\/experiments\/new$/)
  await page.getByRole('link', { name: /^Demo: / }).click()
  await page.getByLabel('Name').fill('RAD proxy, R = 2')
  await page.getByLabel('Dataset', { exact: true }).selectOption({ label: `${dataset} · RAD · 20 instances` })
  await page.getByLabel('Sample (first N instances)', { exact: true }).fill('4')
  await page.getByLabel('Generator', { exact: true }).selectOption({ label: `Connection: ${connectionName} (gen)` })
  await page
    .getByLabel('Checker (AGREE, temperature 0)', { exact: true })
    .selectOption({ label: `Connection: ${connectionName} (gen)` })
  await page.getByLabel('Checker model override', { exact: true }).fill('judge')
  await page.getByLabel('Repetitions R', { exact: true }).fill('2')
  await page.getByRole('button', { name: 'Create experiment' }).click()
  await expect(page).toHaveURL(/\/experiments\/(?!new)[^/?]+$/)
  const experimentId = page.url().split('/').at(-1) as string
  await expect(page.getByTestId('count-done')).toHaveText('0 / 8')

  // Start it and watch it finish without reloading.
  await expect(page.getByTestId('live-status')).toHaveText('Live')
  await page.getByRole('button', { name: 'Start' }).click()
  await expect(page.getByTestId('count-done')).toHaveText('8 / 8', { timeout: 90_000 })
  await expect(page.getByText('done', { exact: true }).first()).toBeVisible()

  // The exported messages, through the CLI.
  const res = await page.request.get(`/api/experiments/${experimentId}/export?table=m&format=jsonl`)
  expect(res.status()).toBe(200)
  const file = path.join(tmpdir(), `parley-e2e-${experimentId}.jsonl`)
  writeFileSync(file, await res.text())
  const cli = JSON.parse(execFileSync(process.execPath, ['bin/parley.mjs', 'pxp', 'stats', file], { encoding: 'utf8' }))
  expect(cli.repetitions).toBe(2)
  expect(cli.sessions).toBe(4)

  await page.getByRole('link', { name: 'Intelligibility dashboard' }).click()
  const spreads: Record<string, { median: number; min: number; max: number }> = {
    'oneWay-human': cli.oneWay.human,
    'oneWay-machine': cli.oneWay.machine,
    twoWay: cli.twoWay,
    'strong-human': cli.strong.human,
    'strong-machine': cli.strong.machine,
    'ultraStrong-human': cli.ultraStrong.human,
    'ultraStrong-machine': cli.ultraStrong.machine,
  }
  for (const [key, s] of Object.entries(spreads)) {
    const cell = page.getByTestId(`fig4-${key}`)
    await expect(cell).toHaveAttribute('data-median', String(s.median))
    await expect(cell).toHaveAttribute('data-min', String(s.min))
    await expect(cell).toHaveAttribute('data-max', String(s.max))
  }
  await expect(page.getByRole('figure', { name: 'One-way intelligible sessions by message bound j' })).toBeVisible()

  // The session inspector shows D, M and C with the exact request (the X-ray went to the model).
  await page.getByRole('link', { name: 'Inspect' }).first().click()
  await expect(page.getByRole('heading', { name: 'M — messages' })).toBeVisible()
  await page.locator('details').first().click()
  await expect(page.getByText(/\[image, \d+ KB\]/).first()).toBeVisible()
})
