import { randomUUID } from 'node:crypto'
import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

const RAD = 'Demo RAD: simulated model vs the ground truth, R = 2'

async function runId(name: string) {
  const [run] = await sql<{ id: string }>('SELECT id FROM "Run" WHERE name = $1', [name])
  if (!run) throw new Error(`no run ${name}`)
  return run.id
}

test('a viewer is offered only links that open: no session page or inspector that answers 403', async ({ page }) => {
  const id = await runId(RAD)
  await signIn(page, 'viewer@parley.local')
  await page.goto(`/runs/${id}`)
  const sessions = page.getByRole('table', { name: 'Sessions of this run' })
  await expect(sessions.locator('tbody tr').first()).toBeVisible()
  await expect(sessions.getByRole('link', { name: 'Open' })).toHaveCount(0)
  await expect(sessions.getByRole('link', { name: 'Inspect' })).toHaveCount(0)
  // Every link the viewer's pages of the run and its study offer opens for them.
  const offered = new Set<string>()
  for (const path of [`/runs/${id}`, `/runs/${id}/dashboard`, '/studies/demo-study', '/runs']) {
    await page.goto(path)
    for (const href of await page
      .locator('main a[href^="/"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? '')))
      offered.add(href)
  }
  expect(offered.size).toBeGreaterThan(3)
  const refused: string[] = []
  for (const href of offered) {
    const res = await page.request.get(href, { maxRedirects: 5 })
    if (res.status() >= 400) refused.push(`${href} → ${res.status()}`)
  }
  expect(refused).toEqual([])

  // A researcher of the study is offered both, and both open.
  await page.context().clearCookies()
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/runs/${id}`)
  const open = page.getByRole('table', { name: 'Sessions of this run' }).getByRole('link', { name: 'Open' }).first()
  await expect(open).toBeVisible()
  expect((await page.request.get((await open.getAttribute('href')) ?? '')).status()).toBe(200)
})

test('Fig. 5: the median as a line over a shaded min–max band, with the values of a bound on hover', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 900 })
  const id = await runId(RAD)
  await signIn(page, 'researcher@parley.local')
  const dashboard = await (await page.request.get(`/api/v1/runs/${id}/dashboard`)).json()
  const byBound = dashboard.data.report.byBound as Array<{
    j: number
    oneWayHuman: { median: number; min: number; max: number }
    oneWayMachine: { median: number; min: number; max: number }
  }>
  expect(byBound.length).toBeGreaterThan(1)
  await page.goto(`/runs/${id}/dashboard`)
  const fig5 = page.getByTestId('fig5')
  // One band and one median line per agent; no error bars.
  await expect(fig5.locator('path.recharts-area-area')).toHaveCount(2)
  await expect(fig5.locator('.recharts-line path.recharts-curve')).toHaveCount(2)
  await expect(fig5.locator('.recharts-errorBar')).toHaveCount(0)
  // Hover a bound: its median, min and max for both agents.
  const b = byBound[Math.floor(byBound.length / 2)] as (typeof byBound)[number]
  await fig5.scrollIntoViewIfNeeded()
  const tick = fig5.locator('.recharts-xAxis-tick-labels text').filter({ hasText: new RegExp(`^${b.j}$`) })
  const grid = await fig5.locator('.recharts-cartesian-grid').boundingBox()
  const at = await tick.boundingBox()
  if (!grid || !at) throw new Error('no chart')
  await page.mouse.move(at.x + at.width / 2, grid.y + grid.height / 2)
  const tip = page.getByTestId('fig5-tooltip')
  await expect(tip).toContainText(`messages 1–${b.j}`)
  const h = b.oneWayHuman
  const m = b.oneWayMachine
  await expect(tip.locator('[data-series="human"]')).toHaveText(
    `one-way for h (human): median ${h.median} (min ${h.min}, max ${h.max})`,
  )
  await expect(tip.locator('[data-series="machine"]')).toHaveText(
    `one-way for m (machine): median ${m.median} (min ${m.min}, max ${m.max})`,
  )
})

test('My work says what a session waits for: the person’s own unfinished one, linked', async ({ page }) => {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const run = `e2e-chain-${randomUUID()}`
  await sql(
    `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, status, "updatedAt")
     VALUES ($1, 'demo-study', 'chained run', 'pxp', 'drug', 'none', '{"n":10,"k":3,"carryOver":true}', '{}', 1, 'running', now())`,
    [run],
  )
  const ids: string[] = []
  for (const position of [0, 1]) {
    const id = `e2e-chain-${position}-${randomUUID()}`
    ids.push(id)
    await sql(
      `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", position, "updatedAt")
       VALUES ($1, 'demo-study', $2, 'pxp', '1', '{"n":10,"k":3,"carryOver":true}', 'drug', $3, $4, $5, $6, $7, now())`,
      [
        id,
        run,
        JSON.stringify({
          input: { smiles: position ? 'CCOC(=O)CC' : 'CCOC(C)=O' },
          prediction: 'CCO',
          explanation: 'x',
        }),
        JSON.stringify({
          m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
          h: { kind: 'human', userId: expert?.id, claimable: false },
        }),
        position ? 'waiting' : 'awaiting',
        position ? null : 'h',
        position,
      ],
    )
    await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [id, expert?.id])
  }
  try {
    await signIn(page, 'expert@parley.local')
    await page.goto('/work?queue=waiting')
    const row = page.locator(`tr[data-session-id="${ids[1]}"]`)
    await expect(row).toContainText('waiting')
    await expect(row).not.toContainText('in progress')
    const waitsFor = row.getByTestId('waiting-for')
    await expect(waitsFor).toHaveText(/^for your session .+ \(your turn there\)$/)
    await expect(waitsFor.getByRole('link')).toHaveAttribute('href', `/sessions/${ids[0]}`)
  } finally {
    await sql(`UPDATE "ProtocolSession" SET status = 'done', "awaitingSeat" = NULL WHERE "runId" = $1`, [run])
  }
})
