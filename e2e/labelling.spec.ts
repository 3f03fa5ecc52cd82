import { randomUUID } from 'node:crypto'
import type { Page, Response } from '@playwright/test'
import { expect, test } from './fixtures'
import { signIn, signOut, sql } from './helpers'

/**
 * Labelling in the browser (issue 25): a researcher sets up a project with two blind annotators per
 * item; the annotator labels five items with the keyboard (digits pick, Enter sends, a reload mid-item
 * keeps the draft); a second annotator on an item the first labelled receives nothing of the first one's
 * label (not on screen, not in any response the page gets); the researcher reads the agreement page and
 * adjudicates the disagreement, and the final label is in the export.
 */
const SECRET = `quartz-lantern-${randomUUID().slice(0, 8)}`
const ITEMS = [
  'The river froze over in January.',
  'Bees communicate the direction of food with a dance.',
  'The museum opens at nine on weekdays.',
  'Copper conducts electricity well.',
  'The train to the coast leaves every hour.',
  'Sourdough needs a fed starter.',
]

async function itemsDataset(name: string): Promise<string> {
  const id = `e2e-ds-${randomUUID()}`
  await sql(
    `INSERT INTO "Dataset" (id, "studyId", name, kind, source, status, "rowsDone", "rowsTotal")
     VALUES ($1, 'demo-study', $2, 'labelling-items', 'e2e', 'ready', $3, $3)`,
    [id, name, ITEMS.length],
  )
  for (const [index, text] of ITEMS.entries())
    await sql(
      `INSERT INTO "Instance" (id, "datasetId", index, input, prediction, explanation, meta)
       VALUES ($1, $2, $3, $4::jsonb, '"yes"', '', $5::jsonb)`,
      [
        `${id}-${index}`,
        id,
        index,
        JSON.stringify({ kind: 'text', id: `item-${index + 1}`, text, format: 'plain' }),
        JSON.stringify({ itemId: `item-${index + 1}`, kind: 'text' }),
      ],
    )
  return id
}

/** The label form is on screen: its first question's radio group. */
const labelForm = (page: Page) =>
  page.getByRole('radiogroup', { name: 'Does the item meet the criterion in the guidelines?' })

/** From My work: claim this run's first open slot (the seat's claim button opens the session). */
async function claimFromWork(page: Page, runName: string, item?: string) {
  // One page of 100: the demo's own labelling projects offer the annotator many seats too.
  await page.goto('/work?queue=claimable&pageSize=100')
  let row = page.locator('tr', { hasText: runName }).filter({ has: page.getByRole('button', { name: /Claim/ }) })
  if (item) row = row.filter({ hasText: `${item}:` })
  await row.first().getByRole('button', { name: 'Claim the Annotator seat' }).click()
  await expect(labelForm(page)).toBeVisible({ timeout: 30_000 })
}

test('annotators label by keyboard, blind to each other; the researcher adjudicates a disagreement', async ({
  page,
}) => {
  test.setTimeout(240_000)
  const runName = `Labels by keyboard ${Date.now()}`
  const datasetName = `e2e items ${Date.now()}`
  await itemsDataset(datasetName)

  // The researcher sets the project up on the labelling form: two annotators per item, yes/no/unsure.
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs/new/labelling?studyId=demo-study')
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(runName)
  const sets = page.getByLabel('Dataset')
  await sets.selectOption((await sets.locator('option', { hasText: datasetName }).getAttribute('value')) ?? '')
  await page.getByLabel('Annotators per item').fill('2')
  await page.getByLabel('Preset', { exact: true }).selectOption('yes-no-unsure')
  await page.getByRole('button', { name: 'Create run' }).click()
  await expect(page).toHaveURL(/\/runs\/[^/]+$/, { timeout: 30_000 })
  const runId = page.url().split('/').pop() as string
  await signOut(page)

  // The annotator labels five items; the labelling is all keyboard.
  await signIn(page, 'annotator@parley.local')
  for (let i = 0; i < 5; i++) {
    await claimFromWork(page, runName)
    const form = labelForm(page)
    if (i === 0) {
      // Digits typed into the rationale are text, not shortcuts: "yes" stays chosen.
      await page.keyboard.press('1')
      await expect(form.getByRole('radio', { name: /Yes/ })).toHaveAttribute('aria-checked', 'true')
      await page.getByLabel(/Rationale/).focus()
      await page.keyboard.type(`${SECRET} 2 3`)
      await expect(form.getByRole('radio', { name: /Yes/ })).toHaveAttribute('aria-checked', 'true')
      await page.keyboard.press('Tab')
    } else if (i === 2) {
      // A reload mid-item: the draft (here "unsure") comes back.
      await page.keyboard.press('3')
      await expect(form.getByRole('radio', { name: /Unsure/ })).toHaveAttribute('aria-checked', 'true')
      await expect(page.getByText('Draft saved')).toBeVisible({ timeout: 15_000 })
      await page.reload()
      await expect(labelForm(page).getByRole('radio', { name: /Unsure/ })).toHaveAttribute('aria-checked', 'true')
    } else {
      await page.keyboard.press(i % 2 ? '1' : '2')
    }
    await page.keyboard.press('Enter')
    await expect(page.getByRole('heading', { name: 'This session is over' })).toBeVisible({ timeout: 30_000 })
  }
  const labels = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "ProtocolMessage" m JOIN "ProtocolSession" s ON s.id = m."sessionId"
       JOIN "user" u ON u.id = m."authorUserId"
      WHERE s."runId" = $1 AND u.email = 'annotator@parley.local'`,
    [runId],
  )
  expect(labels[0]?.n).toBe(5)
  const [first] = await sql<{ instanceId: string; item: string; answer: string; elapsed: number }>(
    `SELECT s."instanceId", s.instance->>'id' AS item, m.body->'answers'->>'answer' AS answer,
            (m.body->>'elapsedMs')::int AS elapsed
       FROM "ProtocolMessage" m JOIN "ProtocolSession" s ON s.id = m."sessionId"
      WHERE s."runId" = $1 AND m.body->>'rationale' LIKE $2`,
    [runId, `${SECRET}%`],
  )
  expect(first).toMatchObject({ answer: 'yes' })
  expect(first?.elapsed).toBeGreaterThan(0)
  await signOut(page)

  // A second annotator takes the other slot of that item from My work: nothing of the first label
  // reaches the page (not on screen, not in any response).
  await signIn(page, 'expert@parley.local')
  const bodies: string[] = []
  const keep = async (r: Response) => {
    const type = r.headers()['content-type'] ?? ''
    if (/text\/html|text\/x-component|application\/json/.test(type)) bodies.push(await r.text().catch(() => ''))
  }
  page.on('response', keep)
  await claimFromWork(page, runName, first?.item)
  await expect(page.getByText(ITEMS[Number(first?.item.split('-')[1]) - 1] ?? '?', { exact: true })).toBeVisible()
  await expect(page.getByText(SECRET)).toHaveCount(0)
  await page.keyboard.press('2')
  await page.keyboard.press('Enter')
  await expect(page.getByRole('heading', { name: 'This session is over' })).toBeVisible({ timeout: 30_000 })
  page.off('response', keep)
  expect(bodies.length).toBeGreaterThan(0)
  for (const b of bodies) {
    expect(b).not.toContain(SECRET)
    expect(b).not.toContain('annotator@parley.local')
  }
  await signOut(page)

  // The researcher reads the agreement and adjudicates the item the two disagree on.
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/studies/demo-study/p/labelling/agreement/${runId}`)
  await expect(page.getByText(/Krippendorff/).first()).toBeVisible({ timeout: 30_000 })
  await page.goto(`/studies/demo-study/p/labelling/adjudicate/${runId}`)
  await expect(page.getByText(SECRET)).toBeVisible({ timeout: 30_000 })
  await page.getByLabel('Final label').first().selectOption('yes')
  await page.getByLabel('Note (why)').first().fill('The text states it plainly.')
  await page.getByRole('button', { name: 'Set final label' }).first().click()
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible({ timeout: 15_000 })
  const exported = await page.evaluate(async (id) => {
    const r = await fetch(`/api/v1/runs/${id}/export?table=final-labels&format=jsonl`)
    return { status: r.status, text: await r.text() }
  }, runId)
  expect(exported.status).toBe(200)
  const rows = exported.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { final: unknown; source: string; note: string })
  expect(rows.find((r) => r.source === 'adjudicated')).toMatchObject({
    final: 'yes',
    note: 'The text states it plainly.',
  })
})
