import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { zipSync } from 'fflate'
import { sharedDir, sharedMissing } from '../tests/support/shared'
import { expect, test } from './fixtures'
import { signIn, signOut, sql } from './helpers'

const GAME = 'datasets/clembench-privateshared'

/** The released game folder as the zip a researcher would upload (read from ../shared, built in memory). */
function gameZip(): Buffer {
  const root = sharedDir(GAME)
  const files: Record<string, Uint8Array> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else files[`privateshared/${path.relative(root, p)}`] = new Uint8Array(readFileSync(p))
    }
  }
  walk(root)
  return Buffer.from(zipSync(files))
}

/** slot → the phrasings of the released game (requests and probing questions of travel-booking). */
const phrasings = (file: string) =>
  JSON.parse(readFileSync(sharedDir(GAME, 'resources', 'texts', 'travel-booking', file), 'utf8')) as Record<
    string,
    string[]
  >
const slotOf = (text: string, table: Record<string, string[]>) =>
  Object.entries(table).find(([, phrases]) => phrases.some((p) => text.includes(p)))?.[0]

test('a person plays the released travel-booking game in the browser and scores like a model (Main Score 100)', async ({
  page,
}) => {
  const missing = sharedMissing(GAME)
  test.skip(!!missing, missing ?? '')
  test.setTimeout(180_000)
  const requests = phrasings('requests.json')
  const probes = phrasings('probing_questions.json')

  // A researcher imports the game folder and sets up a run whose answerer is the demo expert.
  await signIn(page, 'researcher@parley.local')
  await page.goto('/studies/demo-study')
  const importForm = page.locator('form', { has: page.getByRole('button', { name: 'Import', exact: true }) })
  const dataset = `privateshared ${Date.now()}`
  await importForm.getByLabel('Name').fill(dataset)
  await importForm
    .locator('input[name="file"]')
    .setInputFiles({ name: 'privateshared.zip', mimeType: 'application/zip', buffer: gameZip() })
  await importForm.getByRole('button', { name: 'Import', exact: true }).click()
  await expect(page.getByText(/Imported \d+ game instance\(s\) of .*travel-booking/)).toBeVisible({ timeout: 30_000 })

  await page.goto('/runs/new/scorekeeping?studyId=demo-study')
  const name = `People play ${Date.now()}`
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
  const games = page.getByLabel('Game instances')
  await games.selectOption((await games.locator('option', { hasText: dataset }).getAttribute('value')) ?? '')
  await page.getByLabel('Only these experiments (optional)').fill('travel-booking')
  await page.getByLabel('A person of the study').check()
  const person = page.getByLabel('Person', { exact: true })
  await person.selectOption(
    (await person.locator('option', { hasText: 'expert@parley.local' }).first().getAttribute('value')) ?? '',
  )
  await page.getByRole('button', { name: 'Create run' }).click()
  await expect(page).toHaveURL(/\/(sessions|runs)\/[^/]+$/, { timeout: 30_000 })
  const [run] = await sql<{ id: string }>('SELECT id FROM "Run" WHERE name = $1', [name])
  expect(run).toBeDefined()
  const [first] = await sql<{ id: string; n: string }>(
    `SELECT id, (SELECT count(*) FROM "ProtocolSession" WHERE "runId" = $1)::text AS n
     FROM "ProtocolSession" WHERE "runId" = $1 ORDER BY position LIMIT 1`,
    [run?.id],
  )
  expect(first?.n).toBe('10') // the ten travel-booking instances of the released file
  await signOut(page)

  // The expert finds the game in their queue and plays it: each request answered with the slot's
  // value (read from the page), each side question answered from what they have said so far.
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${first?.id}`)
  const knows = page.getByLabel('What the answerer knows')
  await expect(knows).toBeVisible()
  const slots = new Map<string, string>()
  const names = await knows.locator('dt').allInnerTexts()
  const values = await knows.locator('dd').allInnerTexts()
  for (const [i, n] of names.entries()) slots.set(n.trim().toLowerCase(), values[i]?.trim() ?? '')
  expect([...slots.keys()].sort()).toEqual(['by', 'class', 'from', 'to', 'when'])

  const given = new Set<string>()
  const seq = page.locator('input[name="seq"]')
  for (let turn = 0; turn < 80; turn++) {
    const outcome = page.getByTestId('outcome')
    await expect(seq.or(outcome).first()).toBeAttached({ timeout: 20_000 })
    if (await outcome.isVisible()) break
    const j = await seq.getAttribute('value')
    const probe = page.getByTestId('probe-question')
    if (await probe.isVisible()) {
      const question = (await probe.textContent()) ?? ''
      const slot = slotOf(question, probes)
      expect(slot, question).toBeDefined()
      await page.keyboard.press(given.has(slot as string) ? 'y' : 'n')
    } else {
      const request = (await page.getByTestId('request').textContent()) ?? ''
      const slot = slotOf(request, requests)
      expect(slot, request).toBeDefined()
      given.add(slot as string)
      await page.getByLabel('Your answer, in one short sentence').fill(slots.get(slot as string) ?? '')
      await page.keyboard.press('Enter')
    }
    // The next question arrives on the same page (no reload), or the game ends. The turn number is
    // read without waiting: a form that disappears between a count and a getAttribute (the game
    // just ended) made getAttribute wait for a form that never came back, past toPass's timeout.
    await expect(async () => {
      const ended = await outcome.isVisible()
      const now = await seq.evaluateAll((inputs) => inputs[0]?.getAttribute('value') ?? null)
      expect(ended || (now !== null && now !== j)).toBe(true)
    }).toPass({ timeout: 20_000 })
  }
  await expect(page.getByTestId('outcome')).toHaveAttribute('data-outcome', 'complete')
  expect(given.size).toBe(5)
  await expect(page.getByTestId('episode-scores').locator('[data-score="Main Score"]')).toHaveText('100')
  await expect(page.getByTestId('episode-scores').locator('[data-score="Aborted"]')).toHaveText('0')
})
