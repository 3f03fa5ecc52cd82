import pg from 'pg'
import { expect, test } from './fixtures'
import { signIn } from './helpers'
import { type ProductionServer, startProductionServer } from './production-server'

/**
 * The offline simulated model in the production server, as `npm start` runs it (two web processes, the
 * demo seeded by its own process): a researcher creates a run of every protocol on it through the pages
 * and each one ends done with valid results; an expert plays a seeded session to its end. Only the
 * seeded runs used to work: new ones got the generic fallback replies (PXP stalled at message 1, EVINCE
 * "finished" on `simulated label`, every scorekeeping episode aborted).
 */
const port = Number(process.env.PARLEY_E2E_PORT ?? 3100) + 1
test.use({ baseURL: `http://127.0.0.1:${port}` })
test.describe.configure({ mode: 'serial' })

let server: ProductionServer
test.beforeAll(async () => {
  test.setTimeout(240_000)
  server = await startProductionServer(port)
})
test.afterAll(async () => {
  await server?.stop()
})

async function query<T>(text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: server.databaseUrl })
  await c.connect()
  try {
    return (await c.query(text, params)).rows as T[]
  } finally {
    await c.end()
  }
}

/** Choose the simulated model in a model picker (its label names the connection). */
async function simulated(select: ReturnType<import('@playwright/test').Page['getByLabel']>) {
  const value = await select.locator('option', { hasText: 'Simulated demo model' }).first().getAttribute('value')
  await select.selectOption(value ?? '')
}

/** The run this page shows, once every session of it is done; its sessions' statuses. */
async function runFinishes(page: import('@playwright/test').Page) {
  await expect(page).toHaveURL(/\/runs\/(?!new)[^/?]+$/)
  const runId = page.url().split('/').at(-1) as string
  const total = Number((await page.getByTestId('count-done').textContent())?.split('/')[1]?.trim())
  expect(total).toBeGreaterThan(0)
  await expect(page.getByTestId('count-done')).toHaveText(`${total} / ${total}`, { timeout: 120_000 })
  const sessions = await query<{ status: string; stopReason: string | null; messages: number }>(
    `SELECT s.status, s."stopReason", (SELECT count(*)::int FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS messages
       FROM "ProtocolSession" s WHERE s."runId" = $1`,
    [runId],
  )
  expect(sessions).toHaveLength(total)
  for (const s of sessions) {
    expect(s.status).toBe('done')
    expect(s.stopReason).not.toBeNull()
  }
  return { runId, sessions }
}

async function newRun(page: import('@playwright/test').Page, protocol: RegExp) {
  await page.goto('/runs')
  await page.getByRole('link', { name: 'New run' }).click()
  await page.getByRole('link', { name: protocol }).click()
  await page.getByRole('link', { name: /^Demo: / }).click()
}

test('a researcher runs every protocol on the simulated model through the pages, and each run ends done with valid results', async ({
  page,
}) => {
  test.setTimeout(420_000)
  await signIn(page, 'researcher@parley.local')

  // PXP on the demo retrosyntheses: the machine and its checker are the simulated model.
  await newRun(page, /^PXP \/ INTERACT/)
  await page.getByLabel('Name').fill('PXP on the simulated model')
  const drug = page.getByLabel('Dataset', { exact: true })
  await drug.selectOption((await drug.locator('option', { hasText: '· DRUG ·' }).first().getAttribute('value')) ?? '')
  await simulated(page.getByLabel('Generator', { exact: true }))
  await simulated(page.getByLabel('Checker (AGREE, temperature 0)', { exact: true }))
  await page.getByRole('button', { name: 'Create experiment' }).click()
  const pxp = await runFinishes(page)
  // Every session is a dialogue, not a stall after the machine's first message.
  for (const s of pxp.sessions) expect(s.messages).toBeGreaterThanOrEqual(2)
  const untagged = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "ProtocolMessage" m JOIN "ProtocolSession" s ON s.id = m."sessionId"
      WHERE s."runId" = $1 AND (m.label IS NULL OR m.value IS NULL OR m.value = '')`,
    [pxp.runId],
  )
  expect(untagged[0]?.n).toBe(0)
  await page.getByRole('link', { name: 'Intelligibility dashboard' }).click()
  await expect(page.getByTestId('fig4-twoWay')).toHaveAttribute('data-median', /^\d+(\.\d+)?$/)

  // EVINCE on the demo case set: both debaters and the judge are the simulated model.
  await newRun(page, /^EVINCE debate/)
  await page.getByLabel('Name').fill('EVINCE on the simulated model')
  for (const seat of ['Debater A', 'Debater B']) {
    const group = page.getByRole('group', { name: new RegExp(`^${seat}`) })
    await simulated(group.getByLabel('Model', { exact: true }))
  }
  await simulated(page.getByLabel('Judge model (CRIT and the final report, temperature 0)'))
  await page.getByRole('button', { name: 'Start debate' }).click()
  const evince = await runFinishes(page)
  // Every debater's distribution sums to 1 over real labels (never the fallback's `simulated label`).
  const finals = await query<{ body: { kind: string; predictions?: { label: string; probability: number }[] } }>(
    `SELECT m.body FROM "ProtocolMessage" m JOIN "ProtocolSession" s ON s.id = m."sessionId"
      WHERE s."runId" = $1 AND m.body->>'kind' = 'turn'`,
    [evince.runId],
  )
  expect(finals.length).toBeGreaterThan(0)
  for (const { body } of finals) {
    const top = body.predictions ?? []
    expect(top.length).toBeGreaterThan(0)
    expect(Math.abs(top.reduce((a, t) => a + t.probability, 0) - 1)).toBeLessThan(0.011)
    for (const t of top) expect(t.label).not.toMatch(/simulated/i)
  }
  const results = await page.request.get(`/api/v1/runs/${evince.runId}/results`)
  const accuracy = (await results.json()).data.accuracy
  expect(accuracy.n).toBe(evince.sessions.length)

  // The scorekeeping game on the demo game: the answerer is the simulated model.
  await newRun(page, /^Scorekeeping/)
  await page.getByLabel('Name').fill('Scorekeeping on the simulated model')
  await simulated(page.getByLabel('Model', { exact: true }))
  await page.getByRole('button', { name: 'Create run' }).click()
  const game = await runFinishes(page)
  const aborted = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "ProtocolSession" WHERE "runId" = $1 AND "stopReason" <> 'complete'`,
    [game.runId],
  )
  expect(aborted[0]?.n).toBe(0)
})

test('an expert plays a seeded session against the simulated model to its end', async ({ page }) => {
  test.setTimeout(180_000)
  await signIn(page, 'expert@parley.local')
  await page.goto('/work')
  await page.getByRole('link', { name: 'Next session' }).first().click()
  await expect(page).toHaveURL(/\/sessions\/[^/?]+$/)
  const sessionId = page.url().split('/').at(-1) as string
  const thread = page.getByRole('list', { name: 'Messages' })
  for (let turn = 0; turn < 6; turn++) {
    const form = page.getByRole('button', { name: 'Send' })
    if ((await form.count()) === 0) break
    const before = await thread.getByRole('listitem').count()
    await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('Yes').check()
    await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('Yes').check()
    await page.getByLabel('Your prediction').fill('CCO.CC(=O)O')
    await page.getByLabel('Your explanation').fill('An ester made from the acid and the alcohol.')
    await page.getByRole('button', { name: 'Send' }).click()
    // The simulated machine answers (or the session ends with the expert's message).
    await expect
      .poll(
        async () => {
          const [s] = await query<{ status: string; n: number }>(
            `SELECT status, (SELECT count(*)::int FROM "ProtocolMessage" WHERE "sessionId" = $1) AS n FROM "ProtocolSession" WHERE id = $1`,
            [sessionId],
          )
          return s?.status === 'done' || (s?.status === 'awaiting' && (s?.n ?? 0) >= before + 2)
        },
        { timeout: 30_000 },
      )
      .toBe(true)
    await page.reload()
  }
  const [s] = await query<{ status: string; stopReason: string }>(
    `SELECT status, "stopReason" FROM "ProtocolSession" WHERE id = $1`,
    [sessionId],
  )
  expect(s?.status).toBe('done')
  expect(s?.stopReason).toMatch(/^(mutual-ratify|machine-reject|human-reject|bound)$/)
  await expect(page.getByText(/done/i).first()).toBeVisible()
})
