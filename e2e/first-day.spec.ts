import { randomUUID } from 'node:crypto'
import type { Browser, Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

/** What a new user meets on their first day: form errors, the reset page, tables, wording, focus. */

async function firstId(text: string, params: unknown[] = []) {
  const [row] = await sql<{ id: string }>(text, params)
  if (!row) throw new Error(`nothing for ${text}`)
  return row.id
}

test('a refused form says what to do in plain words, once, beside the field, which takes the focus', async ({
  page,
}) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs/new/pxp?studyId=demo-study')
  const name = `zero repetitions ${Date.now()}`
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
  await page.getByLabel('Message bound n').fill('101')
  await page.getByLabel('Repetitions R').fill('0')
  // The button is at the bottom of a long form: the errors are far above it.
  await page.getByRole('button', { name: 'Create experiment' }).click()
  await expect(page.getByText('Enter a number of at least 1.')).toHaveCount(1)
  await expect(page.getByText('Enter a number of at most 100.')).toHaveCount(1)
  await expect(page.getByText(/Too small|Too big|expected number|Invalid input/)).toHaveCount(0)
  // The first field in error has the focus (and so is in view), described by its message.
  const n = page.getByLabel('Message bound n')
  await expect(n).toBeFocused()
  await expect(n).toBeInViewport()
  await expect(n).toHaveAttribute('aria-invalid', 'true')
  await expect(n).toHaveAccessibleDescription(/Enter a number of at most 100\./)
  // Nothing was lost or created.
  await expect(page.getByLabel('Repetitions R')).toHaveValue('0')
  expect(await sql('SELECT 1 FROM "Run" WHERE name = $1', [name])).toHaveLength(0)
})

async function newUser(page: Page, email: string) {
  await page.goto('/admin/users')
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create user' }) })
  await form.getByLabel('Name').fill('Rosa Reset')
  await form.getByLabel('Email').fill(email)
  await form.getByLabel('Initial password').fill('first fine password')
  await form.getByRole('button', { name: 'Create user' }).click()
  await expect(page.getByRole('status')).toContainText(`Created ${email}`)
  return page.getByRole('row').filter({ has: page.getByRole('cell', { name: email, exact: true }) })
}

test('Reset password opens under the row without widening the Users table; the reset page says why it refuses', async ({
  page,
  browser,
}) => {
  await page.setViewportSize({ width: 1280, height: 900 })
  const email = `why-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  const row = await newUser(page, email)
  const table = page.getByRole('table', { name: 'Users' })
  const fits = () =>
    table.evaluate((t) => {
      const box = t.parentElement as HTMLElement
      return {
        table: t.getBoundingClientRect().width,
        room: box.clientWidth,
        page: document.documentElement.scrollWidth,
      }
    })
  const closed = await fits()
  await row.getByRole('button', { name: 'Reset password' }).click()
  const panel = page.getByRole('region', { name: `Reset the password of ${email}` })
  await expect(panel.getByRole('button', { name: 'Issue one-time reset link' })).toBeVisible()
  // Opened, the forms take a row of their own: the table is as wide as before (it was 140 px wider).
  const opened = await fits()
  expect(opened.table).toBeLessThanOrEqual(Math.max(closed.table, closed.room) + 1)
  expect(opened.page).toBeLessThanOrEqual(1280)
  await panel.getByRole('button', { name: 'Issue one-time reset link' }).click()
  const link = (await panel.getByTestId('reset-link').textContent()) ?? ''

  const anon = await (browser as Browser).newContext()
  const reset = await anon.newPage()
  await reset.goto(link)
  const field = reset.getByLabel('New password')
  const submit = async (password: string) => {
    await field.fill(password)
    await reset.getByLabel('The same password again').fill(password)
    await reset.getByRole('button', { name: 'Set new password' }).click()
  }
  await submit('password1')
  // Why, once, beside the field, which takes the focus.
  await expect(reset.getByText('It is a common password.', { exact: false })).toHaveCount(1)
  await expect(field).toBeFocused()
  // No message above the form repeating it (Next's route announcer is an empty alert of its own).
  await expect(reset.getByRole('alert').filter({ hasText: /password/i })).toHaveCount(0)
  // The person's own email is as guessable as a word.
  await submit(email)
  await expect(reset.getByText('It is your email, your name or the name of this site.', { exact: false })).toHaveCount(
    1,
  )
  await submit('second fine password')
  await expect(reset.getByRole('status')).toContainText(`Password changed for ${email}`)
  await anon.close()
})

test('the demo study names the protocols its runs use', async ({ page }) => {
  await signIn(page, 'viewer@parley.local')
  await page.goto('/studies/demo-study')
  const protocols = page.getByTestId('study-protocols')
  await expect(protocols.getByRole('link', { name: 'PXP / INTERACT' })).toBeVisible()
  await expect(protocols.getByRole('link', { name: /EVINCE/ })).toBeVisible()
  await expect(protocols.getByRole('link', { name: /Scorekeeping/ })).toBeVisible()
  await expect(page.getByText('Not chosen yet')).toHaveCount(0)
  await protocols.getByRole('link', { name: 'PXP / INTERACT' }).click()
  await expect(page).toHaveURL(/\/runs\?studyId=demo-study&protocol=pxp$/)
})

test('the session page leads back to My work for the people in it, to the run for a researcher', async ({ page }) => {
  const session = await firstId(
    `SELECT s.id FROM "ProtocolSession" s JOIN "SessionSeat" p ON p."sessionId" = s.id
     JOIN "user" u ON u.id = p."userId" WHERE u.email = 'expert@parley.local' AND s."runId" IS NOT NULL
     ORDER BY s."createdAt" LIMIT 1`,
  )
  const [run] = await sql<{ runId: string }>('SELECT "runId" FROM "ProtocolSession" WHERE id = $1', [session])
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/sessions/${session}`)
  await expect(page.getByRole('link', { name: '← The run' })).toHaveAttribute('href', `/runs/${run?.runId}`)
  await expect(page.getByRole('link', { name: '← My work' })).toHaveCount(0)
  await page.context().clearCookies()
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${session}`)
  await expect(page.getByRole('link', { name: '← My work' })).toBeVisible()
})

test('scorekeeping: each question takes the focus as it comes, so the game is played from the keyboard', async ({
  page,
}) => {
  test.setTimeout(120_000)
  // A game of the demo run the people play, given to the annotator (as their claim would).
  const session = await firstId(
    `SELECT s.id FROM "ProtocolSession" s JOIN "Run" e ON e.id = s."runId"
     JOIN "SessionSeat" p ON p."sessionId" = s.id
     WHERE e.name = 'Demo game: people answer (claim a game)' AND p."userId" IS NULL AND s.status = 'awaiting'
     ORDER BY s.position DESC LIMIT 1`,
  )
  const [annotator] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'annotator@parley.local'`)
  await sql(`UPDATE "SessionSeat" SET "userId" = $2, "claimedAt" = now() WHERE "sessionId" = $1`, [
    session,
    annotator?.id,
  ])
  await signIn(page, 'annotator@parley.local')
  await page.goto(`/sessions/${session}`)
  const seq = page.locator('input[name="seq"]')
  const probe = page.getByTestId('probe-question')
  const reply = page.getByLabel('Your answer, in one short sentence')
  let requests = 0
  let probes = 0
  for (let turn = 0; turn < 30 && (requests < 2 || probes < 2); turn++) {
    await expect(seq).toBeAttached({ timeout: 20_000 })
    const j = await seq.getAttribute('value')
    // No click anywhere: whatever was asked has the focus already.
    if (await probe.isVisible()) {
      await expect(probe).toBeFocused()
      await page.keyboard.press('n')
      probes++
    } else {
      await expect(reply).toBeFocused()
      await page.keyboard.type('I would rather not say')
      await page.keyboard.press('Enter')
      requests++
    }
    await expect(async () => {
      const now = await seq.evaluateAll((inputs) => inputs[0]?.getAttribute('value') ?? null)
      const over = await page.getByTestId('outcome').isVisible()
      expect(over || (now !== null && now !== j)).toBe(true)
    }).toPass({ timeout: 20_000 })
    if (await page.getByTestId('outcome').isVisible()) break
  }
  expect(requests + probes).toBeGreaterThan(2)
})

test('the audit log shows changes only by default; sign-ins are one choice away', async ({ page }) => {
  await signIn(page, 'admin@parley.local')
  await page.goto('/admin/audit')
  const entries = page.getByRole('table', { name: 'Audit entries' })
  await expect(entries).toBeVisible()
  await expect(page.getByTestId('changes-only')).toBeVisible()
  await expect(entries.getByRole('cell', { name: 'auth.sign-in', exact: true })).toHaveCount(0)
  await expect(entries.locator('tbody tr').first()).toBeVisible()
  await page.getByRole('link', { name: 'Show everything' }).click()
  await expect(page).toHaveURL(/show=all/)
  await expect(entries.getByRole('cell', { name: 'auth.sign-in', exact: true }).first()).toBeVisible()
  await expect(page.getByLabel('Show')).toHaveValue('all')
})

/** A DRUG session awaiting the demo expert, against the built-in simulated model. */
async function awaitingDrugSession() {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const sessionId = `e2e-retry-${randomUUID()}`
  const demo = { connectionId: 'builtin-demo' }
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'pxp', '1', '{"n":10,"k":3}', 'drug', $2, $3, 'awaiting', 'h', now())`,
    [
      sessionId,
      JSON.stringify({ input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' }),
      JSON.stringify({
        m: { kind: 'llm', model: demo, helpers: { checker: demo } },
        h: { kind: 'human', userId: expert?.id, claimable: false },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [sessionId, expert?.id])
  const first = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction of the ester.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', $3, $4, $5)`,
    [randomUUID(), sessionId, first.prediction, first.explanation, JSON.stringify(first)],
  )
  return sessionId
}

test('a turn that cannot reach the server keeps the form and its text and offers Retry, not the error page', async ({
  page,
}) => {
  const sessionId = await awaitingDrugSession()
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No').check()
  await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('No').check()
  await page.getByLabel('Your prediction').fill('CCO.CC(=O)O')
  const explanation = 'Fischer esterification of acetic acid with ethanol, written while offline.'
  await page.getByLabel('Your explanation').fill(explanation)
  // The network drops every server action (the turn is one) on its way out.
  const offline = (route: import('@playwright/test').Route) =>
    route.request().method() === 'POST' && route.request().headers()['next-action']
      ? route.abort('internetdisconnected')
      : route.continue()
  await page.route('**/*', offline)
  await page.getByRole('button', { name: 'Send' }).click()
  const alert = page.getByRole('alert').filter({ hasText: 'Parley could not be reached' })
  await expect(alert).toBeVisible()
  await expect(page.getByRole('heading', { name: 'Something went wrong' })).toHaveCount(0)
  await expect(page.getByLabel('Your explanation')).toHaveValue(explanation)
  await expect(page.getByLabel('Your prediction')).toHaveValue('CCO.CC(=O)O')
  const stored = async () =>
    (
      await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "ProtocolMessage" WHERE "sessionId" = $1`, [sessionId])
    )[0]?.n
  expect(await stored()).toBe(1)
  // Back online: Retry sends the same turn.
  await page.unroute('**/*', offline)
  await alert.getByRole('button', { name: 'Retry' }).click()
  await expect.poll(stored, { timeout: 20_000 }).toBeGreaterThanOrEqual(2)
  const [mine] = await sql<{ explanation: string }>(
    `SELECT detail AS explanation FROM "ProtocolMessage" WHERE "sessionId" = $1 AND seq = 2`,
    [sessionId],
  )
  expect(mine?.explanation).toBe(explanation)
  await expect(alert).toHaveCount(0)
  await sql(`UPDATE "ProtocolSession" SET status = 'done', "awaitingSeat" = NULL WHERE id = $1`, [sessionId])
})
