import { expect, test } from './fixtures'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { signIn } from './helpers'

// Our own OpenAI-compatible server on loopback; the app reaches it through the real openai SDK.
let fake: FakeLlmServer
const KEY = 'sk-e2e-SECRET-9f8e7d6c5b4a'

test.beforeAll(async () => {
  fake = await startFakeLlmServer({
    models: ['gpt-test', 'gpt-test-mini'],
    script: [
      { match: { contains: 'Reply with the word OK' }, replies: [{ text: 'OK' }] },
      { match: { contains: 'echo my key' }, replies: [{ text: `Your key is ${KEY}, keep it safe.` }] },
      {
        match: { contains: 'count slowly' },
        replies: [{ text: 'one two three four five six seven eight', chunkDelayMs: 120 }],
      },
    ],
  })
})
test.afterAll(async () => {
  await fake.close()
})

test('an admin adds a connection to the fake server, tests it, streams a reply; the key never reaches the page', async ({
  page,
}) => {
  await signIn(page, 'admin@parley.local')
  await page.goto('/connections')
  await expect(page.getByText('simulated demo model').first()).toBeVisible()
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Add connection' }) })
  const name = `Fake GPT ${Date.now()}`
  await form.getByLabel('Name').fill(name)
  await form.getByLabel('Provider').selectOption('openai-compatible')
  await form.getByLabel('Base URL').fill(fake.url)
  await form.getByLabel('API key').fill(KEY)
  await form.getByLabel('Default model').fill('gpt-test')
  await form.getByLabel('Extra headers (JSON)').fill('{not json')
  await form.getByRole('button', { name: 'Add connection' }).click()
  await expect(form.getByText(/Extra headers must be a JSON object/).first()).toBeVisible()
  await expect(form.getByLabel('Base URL')).toHaveValue(fake.url)
  await form.getByLabel('Extra headers (JSON)').fill('{"X-Team": "radiology"}')
  await form.getByRole('button', { name: 'Add connection' }).click()
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name)
  expect(await page.content()).not.toContain(KEY)
  await expect(page.getByText('…7d6c5b4a'.slice(-5))).toHaveCount(0) // only the last four are ever shown
  await expect(page.getByText(/Stored key: …5b4a/)).toBeVisible()
  // Extra header values are secrets too: names and masked values only, never the value.
  await expect(page.getByText(/Stored: X-Team: …logy/)).toBeVisible()
  expect(await page.content()).not.toContain('radiology')

  await page.getByRole('button', { name: 'Test connection' }).click()
  await expect(page.getByRole('status').filter({ hasText: 'Connection works' })).toBeVisible()
  await expect(page.getByText('Models listed: gpt-test, gpt-test-mini')).toBeVisible()
  const sent = fake.requests.filter((r) => r.path.endsWith('/chat/completions'))
  expect(sent.at(-1)?.authorization).toBe(`Bearer ${KEY}`)

  // A model that writes the key out: the stream shows it redacted, as the call log stores it.
  const output = page.getByTestId('playground-output')
  await page.getByLabel(/^Prompt/).fill('Please echo my key.')
  await page.getByRole('button', { name: 'Run' }).click()
  await expect(output).toHaveText('Your key is [redacted], keep it safe.')
  expect(await page.content()).not.toContain(KEY)

  // Streaming: the reply grows on the page before it is complete.
  await page.getByLabel(/^Prompt/).fill('Please count slowly to eight.')
  await page.getByRole('button', { name: 'Run' }).click()
  await expect(output).toContainText('one two')
  expect(await output.textContent()).not.toContain('eight')
  await expect(output).toHaveText('one two three four five six seven eight')
  await expect(page.getByText(/first token after \d+ ms/)).toBeVisible()

  // The Calls page shows the calls, in full on their own page, without the key.
  await page.goto('/calls?model=gpt-test')
  await expect(page.getByRole('cell', { name: 'playground' }).first()).toBeVisible()
  await expect(page.getByRole('cell', { name: 'connection-test' }).first()).toBeVisible()
  await page.getByRole('row').filter({ hasText: 'playground' }).first().getByRole('link').click()
  await expect(page.getByText('count slowly').first()).toBeVisible()
  expect(await page.content()).not.toContain(KEY)
})

test('a wrong base URL fails the test with a clear message', async ({ page }) => {
  await signIn(page, 'admin@parley.local')
  await page.goto('/connections')
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Add connection' }) })
  await form.getByLabel('Name').fill(`Nowhere ${Date.now()}`)
  await form.getByLabel('Base URL').fill('http://127.0.0.1:9/v1')
  await form.getByLabel('Default model').fill('gpt-test')
  await form.getByLabel('Request timeout (ms)').fill('2000')
  await form.getByRole('button', { name: 'Add connection' }).click()
  await page.getByRole('button', { name: 'Test connection' }).click()
  await expect(page.getByRole('alert').filter({ hasText: /The connection failed: connection/ })).toBeVisible({
    timeout: 30_000,
  })
})

test('without a real model, the simulated demo model answers and is labelled as simulated', async ({ page }) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/connections/builtin-demo')
  await expect(page.getByText(/built-in simulated model/)).toBeVisible()
  await page.getByLabel(/^Prompt/).fill('What does PXP stand for?')
  await page.getByRole('button', { name: 'Run' }).click()
  await expect(page.getByTestId('playground-output')).toContainText('[Simulated demo model]')
  await expect(page.getByText('simulated demo model', { exact: true })).toBeVisible()
  // A researcher cannot change the global demo connection or the price table.
  await expect(page.getByRole('button', { name: 'Save connection' })).toHaveCount(0)
  expect((await page.goto('/admin/prices'))?.status()).toBe(403)
})
