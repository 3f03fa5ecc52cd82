import { randomUUID } from 'node:crypto'
import { expect, test } from '@playwright/test'
import { signIn, sql } from './helpers'

/**
 * Sessions of two protocols waiting for the demo expert. Their updatedAt lies before anything else in
 * the queue (and each rerun's before the last one's), so they are the oldest: the top of the queue.
 */
async function awaiting() {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const old = (minutes: number) =>
    `'2000-01-01'::timestamp - (now() - '2026-01-01'::timestamp) + interval '${minutes} minutes'`
  const pxpId = `e2e-q-pxp-${randomUUID()}`
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'pxp', '1', '{"n":10,"k":3}', 'drug', $2, $3, 'awaiting', 'h', ${old(0)})`,
    [
      pxpId,
      JSON.stringify({ input: { smiles: 'CC(=O)OCC' }, prediction: 'CCO.CC(=O)O', explanation: 'ester' }),
      JSON.stringify({
        m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
        h: { kind: 'human', userId: expert?.id, claimable: false },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [pxpId, expert?.id])
  const first = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', 'CCO', 'A reduction.', $3)`,
    [randomUUID(), pxpId, JSON.stringify(first)],
  )
  const debateId = `e2e-q-debate-${randomUUID()}`
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'evince', '1', '{"k":3,"crit":false,"report":false}', 'diagnosis', $2, $3, 'awaiting', 'A', ${old(1)})`,
    [
      debateId,
      JSON.stringify({
        input: { symptoms: 'queue case: fever, dry cough, loss of smell' },
        prediction: '',
        explanation: '',
      }),
      JSON.stringify({
        A: { kind: 'human', userId: expert?.id, claimable: false },
        B: { kind: 'llm', model: { connectionId: 'none' }, helpers: {} },
        moderator: { kind: 'program', program: 'no-judge', helpers: {}, params: {} },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'A', $2)`, [debateId, expert?.id])
  return { pxpId, debateId }
}

test('My work lists a PXP session and a debate turn awaiting the expert in one queue, oldest first', async ({
  page,
}) => {
  const { pxpId, debateId } = await awaiting()
  await signIn(page, 'expert@parley.local')
  await page.getByRole('link', { name: 'My work' }).click()
  const rows = page.getByRole('table', { name: 'Your sessions' }).locator('tbody tr')
  await expect(rows.nth(0)).toHaveAttribute('data-session-id', pxpId)
  await expect(rows.nth(1)).toHaveAttribute('data-session-id', debateId)
  await expect(rows.nth(0)).toContainText('PXP / INTERACT')
  await expect(rows.nth(0)).toContainText('Tester')
  await expect(rows.nth(0)).toContainText('awaiting you')
  await expect(rows.nth(1)).toContainText('EVINCE debate')
  await expect(rows.nth(1)).toContainText('Debater A')
  await expect(rows.nth(1)).toContainText('awaiting you')
  await expect(page.getByTestId('queue-yours')).toHaveText(/awaiting you \(([2-9]|\d\d+)\)/)
  // "Next session" is the oldest one waiting.
  await expect(page.getByRole('link', { name: 'Next session' })).toHaveAttribute('href', `/sessions/${pxpId}`)
  // Each opens on the generic session page with its protocol's turn form.
  await rows.nth(1).getByRole('link').first().click()
  await expect(page.getByTestId('session-protocol')).toHaveText('EVINCE debate')
  await expect(page.getByRole('table', { name: 'Your distribution' })).toBeVisible()
  await page.goto('/work')
  await page.getByRole('link', { name: 'Next session' }).click()
  await expect(page.getByTestId('session-protocol')).toHaveText('PXP / INTERACT')
  await expect(page.getByRole('group', { name: 'Does the prediction match yours?' })).toBeVisible()
  // Filtered to what awaits the expert, both are still there.
  await page.goto('/work?queue=yours')
  await expect(page.locator(`tr[data-session-id="${pxpId}"]`)).toBeVisible()
  await expect(page.locator(`tr[data-session-id="${debateId}"]`)).toBeVisible()
})

test('a seat open to any member is offered in the queue, and the first to claim it gets the turn', async ({ page }) => {
  const sessionId = `e2e-q-claim-${randomUUID()}`
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'pxp', '1', '{"n":10,"k":3}', 'drug', $2, $3, 'awaiting', 'h', now())`,
    [
      sessionId,
      JSON.stringify({ input: { smiles: 'OCC(=O)O' }, prediction: 'OCC=O', explanation: 'oxidation' }),
      JSON.stringify({
        m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
        h: { kind: 'human', claimable: true },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId", claimable) VALUES ($1, 'h', NULL, true)`, [
    sessionId,
  ])
  const first = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'OC=O', explanation: 'A guess.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', 'OC=O', 'A guess.', $3)`,
    [randomUUID(), sessionId, JSON.stringify(first)],
  )
  await signIn(page, 'expert@parley.local')
  // One page of 100: the demo's labelling projects offer the expert seats too (a session without a run lists last).
  await page.goto('/work?queue=claimable&pageSize=100')
  const row = page.locator(`tr[data-session-id="${sessionId}"]`)
  await expect(row).toContainText('open to claim')
  // Before the claim the session is not the expert's: its page (instance, dialogue) stays closed.
  expect((await page.request.get(`/sessions/${sessionId}`)).status()).toBe(404)
  await row.getByRole('button', { name: 'Claim the Tester seat' }).click()
  await expect(page).toHaveURL(new RegExp(`/sessions/${sessionId}$`))
  await expect(page.getByTestId('seat-h')).toContainText('you')
  await expect(page.getByRole('group', { name: 'Does the prediction match yours?' })).toBeVisible()
  // The ground truth is not on the page of a participant.
  await expect(page.getByTestId('ground-truth')).toHaveCount(0)
  const [seat] = await sql<{ email: string }>(
    `SELECT u.email FROM "SessionSeat" p JOIN "user" u ON u.id = p."userId" WHERE p."sessionId" = $1`,
    [sessionId],
  )
  expect(seat?.email).toBe('expert@parley.local')
  // Taken: it is the expert's turn now, and no longer open to anyone else. The queue is oldest
  // first and paginated, and a claimed session is the newest: look for it page by page (earlier
  // tests, and their retries, leave other sessions awaiting this expert).
  let found = false
  for (let p = 1; p <= 10 && !found; p++) {
    await page.goto(`/work?queue=yours&page=${p}`)
    const mine = page.locator(`tr[data-session-id="${sessionId}"]`)
    if ((await mine.count()) === 0) continue
    await expect(mine).toContainText('awaiting you')
    found = true
  }
  expect(found).toBe(true)
  await page.goto('/work?queue=claimable&pageSize=100')
  await expect(page.locator(`tr[data-session-id="${sessionId}"]`)).toHaveCount(0)
})
