import { execFileSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { expect, test } from './fixtures'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { PXP_DATA as DATA, sharedMissing } from '../tests/support/shared'
import { fakeConnection, signIn } from './helpers'

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
  const missing = sharedMissing('datasets/pxp-interact')
  test.skip(!!missing, missing ?? '')
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
  await fakeConnection({ id: connectionId, name: connectionName, baseUrl: fake.url, model: 'gen' })

  // Set the experiment up in the form: Runs → New run → the protocol → the study.
  await page.goto('/runs')
  await page.getByRole('link', { name: 'New run' }).click()
  await expect(page).toHaveURL(/\/runs\/new$/)
  await page.getByRole('link', { name: /^PXP \/ INTERACT/ }).click()
  await expect(page).toHaveURL(/\/runs\/new\/[^/?]+$/)
  await page.getByRole('link', { name: /^Demo: / }).click()
  await expect(page.getByRole('heading', { name: 'New PXP experiment' })).toBeVisible()
  await page.getByLabel('Name').fill('RAD proxy, R = 2')
  await page.getByLabel('Dataset', { exact: true }).selectOption({ label: `${dataset} · RAD · 20 instances` })
  await page.getByLabel('Sample (first N instances)', { exact: true }).fill('4')
  await page.getByLabel('Generator', { exact: true }).selectOption({ label: `Connection: ${connectionName} (gen)` })
  await page
    .getByLabel('Checker (AGREE, temperature 0)', { exact: true })
    .selectOption({ label: `Connection: ${connectionName} (gen)` })
  await page.getByLabel('Checker model override', { exact: true }).fill('judge')
  await page.getByLabel('Repetitions R', { exact: true }).fill('2')
  // A draft, so the run can be started while the page watches.
  await page.getByLabel('Create as a draft (start it later from the run page)').check()
  await page.getByRole('button', { name: 'Create experiment' }).click()
  await expect(page).toHaveURL(/\/runs\/(?!new)[^/?]+$/)
  const runId = page.url().split('/').at(-1) as string
  await expect(page.getByTestId('run-protocol')).toHaveText('PXP / INTERACT')
  await expect(page.getByTestId('count-done')).toHaveText('0 / 8')

  // Start it and watch it finish without reloading.
  await expect(page.getByTestId('live-status')).toHaveText('Live')
  await page.getByRole('button', { name: 'Start' }).click()
  await expect(page.getByTestId('count-done')).toHaveText('8 / 8', { timeout: 90_000 })
  await expect(page.getByText('done', { exact: true }).first()).toBeVisible()

  // The exported messages, through the CLI (the old export address answers the same file).
  const res = await page.request.get(`/api/runs/${runId}/export?table=m&format=jsonl`)
  expect(res.status()).toBe(200)
  const text = await res.text()
  const old = await page.request.get(`/api/experiments/${runId}/export?table=m&format=jsonl`)
  expect(old.status()).toBe(200)
  expect(await old.text()).toBe(text)
  const file = path.join(tmpdir(), `parley-e2e-${runId}.jsonl`)
  writeFileSync(file, text)
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

  // The session inspector shows D, M and C with the exact request: the X-ray went to the model, and
  // it is drawn as an image (from the dataset) in the context and in the call, never as base64 text.
  await page.getByRole('link', { name: 'Inspect' }).first().click()
  await expect(page.getByRole('heading', { name: 'M — messages' })).toBeVisible()
  await page.getByRole('button', { name: /^▸ Context of message 1 / }).click()
  const sent = page.getByTestId('context-1').getByRole('img', { name: /^Sent to the model: / })
  await expect(sent).toBeVisible()
  await expect(sent).toHaveAttribute('src', /^\/api\/assets\/[^/]+\/[^/]+\.(png|jpe?g)$/i)
  await expect.poll(() => sent.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
  await page.getByTestId('c-row-1').getByTestId('call').first().getByRole('button').click()
  await expect(page.getByTestId('c-row-1').getByTestId('call').first().getByRole('img').first()).toBeVisible()
  expect((await page.locator('main').textContent()) ?? '').not.toMatch(/base64|\[image, \d+ KB\]/)
})
