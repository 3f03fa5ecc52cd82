import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { expect, test } from '@playwright/test'
import { fakeConnection, signIn } from './helpers'

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (!address || typeof address === 'string') throw new Error('no port')
  return address.port
}

test('a run whose model cannot be reached stalls, says why, and offers Retry all stalled', async ({ page }) => {
  test.setTimeout(120_000)
  const port = await closedPort()
  const connectionId = `e2e-${randomUUID()}`
  const connectionName = `unreachable ${connectionId.slice(-6)}`
  await fakeConnection({
    id: connectionId,
    name: connectionName,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    model: 'gone',
    timeoutMs: 2000,
  })
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs/new')
  await page.getByRole('link', { name: /^EVINCE debate/ }).click()
  await page.getByRole('link', { name: /^Demo: / }).click()
  const name = `Unreachable model ${Date.now()}`
  await page.getByLabel('Name').fill(name)
  await page.getByLabel('One case, typed in').check()
  await page.getByLabel('Symptoms (the information set S)').fill('fever, headache, stiff neck')
  for (const seat of ['A', 'B']) {
    await page
      .getByRole('group', { name: `Debater ${seat}` })
      .getByLabel('Model', { exact: true })
      .selectOption({ label: `Connection: ${connectionName} (gone)` })
  }
  await page
    .getByLabel('Judge model (CRIT and the final report, temperature 0)')
    .selectOption({ label: 'None: no CRIT scores, equal weights, no report' })
  await page.getByRole('button', { name: 'Start debate' }).click()
  // Creating a run always lands on its run page; a one-session run links to its session there.
  await expect(page).toHaveURL(/:\d+\/runs\/[^/]+$/, { timeout: 20_000 })
  await page.getByTestId('open-single-session').click()
  await expect(page).toHaveURL(/:\d+\/sessions\/[^/]+$/)
  // The session page says it stalled, and why (it updates by itself).
  await expect(page.getByRole('alert').filter({ hasText: 'Stalled:' })).toBeVisible({ timeout: 60_000 })

  await page.getByRole('link', { name: /all sessions of this run/ }).click()
  const banner = page.getByTestId('run-blocked')
  await expect(banner).toContainText('1 session stalled.')
  await expect(banner).toContainText(/Stalled at \d\d:\d\d: /)
  await expect(page.getByTestId('status-count-stalled')).toHaveText('1')
  await expect(page.getByTestId('session-state').first()).toContainText('stalled: ')
  // Retry all stalled: it fails again (the port is still closed), and the banner says so.
  await page.getByRole('button', { name: 'Retry all stalled' }).click()
  await expect(banner).toContainText(/Retry failed again at \d\d:\d\d: /, { timeout: 60_000 })
  await expect(page.getByRole('button', { name: 'Retry all stalled' })).toBeVisible()
  const runUrl = page.url()
  // The list of runs says the run is blocked, not just "running".
  await page.goto('/runs')
  const row = page.locator('tr', { has: page.getByRole('link', { name }) })
  await expect(row.getByTestId('run-status')).toContainText('running')
  await expect(row.getByTestId('run-status')).toContainText('blocked')

  // Seats name their model and connection (chosen as the connection's default: resolved to its name).
  await page.goto(runUrl)
  for (const seat of ['A', 'B'])
    await expect(page.getByTestId(`seat-${seat}`)).toContainText(`LLM gone on “${connectionName}”`)
  // Change model: one action moves both debaters off the connection whose call failed (preselected),
  // and queues the stalled session again: the debate finishes without another click.
  await page.getByRole('button', { name: 'Change model' }).click()
  const dialog = page.getByRole('dialog', { name: 'Change model' })
  const replace = dialog.getByLabel('Replace')
  await expect(replace).toHaveValue(`from:${connectionId}`)
  await expect(replace.locator('option:checked')).toHaveText(
    `Every seat on “${connectionName}” (gone): Debater A, Debater B`,
  )
  // Every option's label fits in the select: none is cut off.
  for (const select of [replace, dialog.getByLabel('New model', { exact: true })]) {
    const overflow = await select.evaluate((el) => {
      const s = el as HTMLSelectElement
      const style = getComputedStyle(s)
      const ctx = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D
      ctx.font = style.font
      const room = s.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight) - 16
      return [...s.options].filter((o) => ctx.measureText(o.text).width > room).map((o) => o.text)
    })
    expect(overflow).toEqual([])
  }
  await dialog.getByLabel('New model', { exact: true }).selectOption(JSON.stringify({ connectionId: 'builtin-demo' }))
  await expect(dialog.getByLabel(/Retry the 1 stalled session/)).toBeChecked()
  await dialog.getByRole('button', { name: 'Change model' }).click()
  // (The dialog's confirmation may be gone already: a finished run offers no Change model.)
  for (const seat of ['A', 'B'])
    await expect(page.getByTestId(`seat-${seat}`)).toContainText('LLM parley-demo-simulated on “Simulated demo model')
  await expect(page.getByTestId('count-done')).toHaveText('1 / 1', { timeout: 60_000 })
  await expect(banner).toHaveCount(0)
})
