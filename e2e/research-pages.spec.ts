import type { Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

const RAD = 'Demo RAD: simulated model vs the ground truth, R = 2'
const DRUG = 'Demo DRUG: simulated model vs the ground truth, R = 2'
const DEBATES = 'Demo debates: simulated A (T=0.2) vs B (T=1.0)'
const RAD_PEOPLE = 'Demo RAD: you test the simulated model'

async function runId(name: string) {
  const [run] = await sql<{ id: string }>('SELECT id FROM "Run" WHERE name = $1', [name])
  if (!run) throw new Error(`no run ${name}`)
  return run.id
}

/** The `d` of the drawn lines of a chart: straight segments only (M, L, H, V), no Bézier curve (C, S, Q). */
async function curveCommands(page: Page, scope: string) {
  return page
    .locator(`${scope} path.recharts-curve`)
    .evaluateAll((ps) => ps.map((p) => p.getAttribute('d') ?? '').filter((d) => /[CSQcsq]/.test(d)))
}

test('compare two runs: the Fig. 4 tables of A and B side by side with the differences', async ({ page }) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs')
  await page.getByRole('link', { name: 'Compare two runs' }).click()
  await expect(page.getByRole('heading', { name: 'Compare runs' })).toBeVisible()
  const a = await runId(RAD)
  const b = await runId(RAD_PEOPLE)
  await page.getByLabel('Run A').selectOption(a)
  // With A chosen, B offers only the runs that compare with it: RAD runs, never a DRUG one.
  const runB = page.getByLabel('Run B (one that compares with A)')
  await expect(runB.locator('option', { hasText: RAD_PEOPLE })).toHaveCount(1)
  await expect(runB.locator('option', { hasText: DRUG })).toHaveCount(0)
  await expect(runB.locator('option', { hasText: DEBATES })).toHaveCount(0)
  await runB.selectOption(b)
  await page.getByRole('button', { name: 'Compare' }).click()
  await expect(page).toHaveURL(new RegExp(`a=${a}&b=${b}`))
  const table = page.getByRole('table', { name: 'Fig. 4 of both runs' })
  await expect(table.getByRole('columnheader', { name: `A: ${RAD}` })).toBeVisible()
  await expect(table.getByRole('columnheader', { name: 'Δ proportion' })).toBeVisible()
  for (const key of ['oneWay-human', 'twoWay', 'ultraStrong-machine'])
    await expect(table.getByTestId(`compare-${key}`).locator('[data-delta]').first()).toBeVisible()
  // Swapping A and B flips every difference.
  const delta = async () =>
    table.locator('tbody [data-delta]').evaluateAll((xs) => xs.map((x) => Number(x.getAttribute('data-delta'))))
  const before = await delta()
  await page.getByRole('link', { name: 'Swap A and B' }).click()
  await expect(page).toHaveURL(new RegExp(`a=${b}&b=${a}`))
  await expect.poll(delta).toEqual(before.map((d) => (d === 0 ? 0 : -d)))
  // A debate cannot be compared with a PXP run: a clear message.
  await page.goto(`/runs/compare?a=${a}&b=${await runId(DEBATES)}`)
  await expect(
    page.getByRole('alert').filter({ hasText: 'Only runs of the same protocol can be compared.' }),
  ).toBeVisible()
  // Nor RAD against DRUG, even by address.
  await page.goto(`/runs/compare?a=${a}&b=${await runId(DRUG)}`)
  await expect(
    page.getByRole('alert').filter({ hasText: 'These runs do not compare: A runs on RAD, B on DRUG.' }),
  ).toBeVisible()
  // The run page links here with A chosen.
  await page.goto(`/runs/${a}`)
  await page.getByRole('link', { name: 'Compare with another run' }).click()
  await expect(page).toHaveURL(new RegExp(`/runs/compare\\?a=${a}$`))
})

test('the PXP dashboard at 1280 px: Fig. 5 in steps at whole bounds, whole tag sequences', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 })
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/runs/${await runId(RAD)}/dashboard`)
  const fig5 = page.getByTestId('fig5')
  await expect(fig5.locator('path.recharts-curve').first()).toBeVisible()
  expect(await curveCommands(page, '[data-testid="fig5"]')).toEqual([])
  // A tick per whole message bound, and whole-number counts.
  const xTicks = await fig5
    .locator('.recharts-xAxis-tick-labels text')
    .evaluateAll((ts) => ts.map((t) => t.textContent ?? ''))
  expect(xTicks.length).toBeGreaterThan(1)
  for (const t of xTicks) expect(t).toMatch(/^\d+$/)
  const yTicks = await fig5
    .locator('.recharts-yAxis-tick-labels text')
    .evaluateAll((ts) => ts.map((t) => t.textContent ?? ''))
  for (const t of yTicks) expect(t).toMatch(/^\d+$/)
  // The legend is HTML above the plot: it cannot overlap a tick.
  const legend = await fig5.getByRole('list', { name: 'Legend' }).boundingBox()
  const plot = await fig5.locator('svg.recharts-surface').boundingBox()
  expect((legend?.y ?? 0) + (legend?.height ?? 0)).toBeLessThanOrEqual(plot?.y ?? 0)
  // Every tag sequence is written out in full, nothing cut off.
  const cells = page.getByTestId('tag-sequences').locator('tbody td:first-child')
  await expect(cells.first()).toBeVisible()
  const clipped = await cells.evaluateAll((cs) => cs.filter((c) => c.scrollWidth > c.clientWidth + 1).length)
  expect(clipped).toBe(0)
  const [top] = await sql<{ sequence: string }>(
    `SELECT string_agg(m.label || '_' || m.sender, ' ' ORDER BY m.seq) AS sequence
     FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id
     WHERE ps."runId" = $1 GROUP BY ps.id ORDER BY count(*) DESC LIMIT 1`,
    [await runId(RAD)],
  )
  await expect(cells.filter({ hasText: top?.sequence ?? '' }).first()).toBeVisible()
})

test('debate charts: straight segments, evenly spaced ticks, the stop label above the plot; a square confusion table', async ({
  page,
}) => {
  await signIn(page, 'researcher@parley.local')
  const id = await runId(DEBATES)
  const [session] = await sql<{ id: string }>(
    `SELECT id FROM "ProtocolSession" WHERE "runId" = $1 AND status = 'done' ORDER BY position LIMIT 1`,
    [id],
  )
  await page.goto(`/sessions/${session?.id}`)
  const charts = page.getByTestId('metric-charts')
  await expect(charts.locator('figure')).toHaveCount(6)
  await expect(charts.locator('path.recharts-curve').first()).toBeVisible()
  expect(await curveCommands(page, '[data-testid="metric-charts"]')).toEqual([])
  let stops = 0
  for (const figure of await charts.locator('figure').all()) {
    const ticks = await figure
      .locator('.recharts-yAxis-tick-labels text')
      .evaluateAll((ts) => ts.map((t) => Number(t.textContent)))
    expect(ticks.length).toBeGreaterThan(1)
    const gaps = ticks.slice(1).map((v, i) => Number((v - (ticks[i] as number)).toFixed(9)))
    expect(new Set(gaps).size, `ticks ${ticks.join(', ')}`).toBe(1)
    const stop = figure.locator('svg text').filter({ hasText: /^stop$/ })
    if (await stop.count()) {
      stops++
      const label = await stop.boundingBox()
      const grid = await figure.locator('.recharts-cartesian-grid').boundingBox()
      expect((label?.y ?? 0) + (label?.height ?? 0)).toBeLessThanOrEqual((grid?.y ?? 0) + 1)
    }
  }

  expect(stops).toBe(6) // the finished debate marks its stopping round on every chart

  await page.goto(`/runs/${id}`)
  const confusion = page.getByTestId('confusion')
  await expect(confusion).toBeVisible()
  const cols = await confusion
    .locator('thead th[data-col]')
    .evaluateAll((hs) => hs.map((h) => h.getAttribute('data-col')))
  const rows = await confusion
    .locator('tbody th[data-row]')
    .evaluateAll((hs) => hs.map((h) => h.getAttribute('data-row')))
  expect(cols).toEqual(rows)
  // The diagonal is the correct cases: as many as the accuracy table's top-1 of the debate.
  const diagonal = await confusion
    .locator('td[data-diagonal]')
    .evaluateAll((ds) => ds.reduce((s, d) => s + Number(d.textContent), 0))
  const total = await confusion.locator('td').evaluateAll((ds) => ds.reduce((s, d) => s + Number(d.textContent), 0))
  const top1 = Number(
    await page.getByTestId('accuracy-table').locator('tr[data-key="debate"]').getAttribute('data-top1'),
  )
  expect(diagonal).toBe(Math.round(top1 * total))
})
