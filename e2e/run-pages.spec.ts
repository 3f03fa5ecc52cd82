import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

const RAD = 'Demo RAD: simulated model vs the ground truth, R = 2'

async function runId(name: string) {
  const [run] = await sql<{ id: string }>('SELECT id FROM "Experiment" WHERE name = $1', [name])
  if (!run) throw new Error(`no run ${name}`)
  return run.id
}

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
