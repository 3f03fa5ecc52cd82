import { randomUUID } from 'node:crypto'
import { expect, test } from './fixtures'
import { signIn, signOut, sql } from './helpers'

/**
 * A run of the study with one open PXP session whose person's seat h is claimable and free (what a
 * run with a claimable seat makes), its machine's opening message written: the session awaits h.
 */
async function runWithFreeSeat(studyName: string) {
  const [study] = await sql<{ id: string }>(`SELECT id FROM "Study" WHERE name = $1`, [studyName])
  const studyId = study?.id
  const datasetId = `e2e-seat-ds-${randomUUID()}`
  const runId = `e2e-seat-run-${randomUUID()}`
  const sessionId = `e2e-seat-s-${randomUUID()}`
  const seats = JSON.stringify({
    m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
    h: { kind: 'human', claimable: true },
  })
  await sql(
    `INSERT INTO "Dataset" (id, "studyId", name, kind, source) VALUES ($1, $2, 'seat data', 'drug', 'inline')`,
    [datasetId, studyId],
  )
  await sql(
    `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, status, "updatedAt")
     VALUES ($1, $2, 'Chest X-ray reads', 'pxp', 'drug', $3, '{"n":10,"k":3}', $4, 1, 'running', now())`,
    [runId, studyId, datasetId, seats],
  )
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, $2, $3, 'pxp', '1', '{"n":10,"k":3}', 'drug', $4, $5, 'awaiting', 'h', now())`,
    [
      sessionId,
      studyId,
      runId,
      JSON.stringify({ input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'ester' }),
      seats,
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId", claimable) VALUES ($1, 'h', NULL, true)`, [
    sessionId,
  ])
  const first = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', 'CCO', 'A reduction.', $3)`,
    [randomUUID(), sessionId, JSON.stringify(first)],
  )
  return { runId, sessionId }
}

test('a researcher creates a study, adds an expert, names them on a free seat; it is in their queue', async ({
  page,
}) => {
  const name = `Radiology pilot ${Date.now()}`
  // An expert account of its own, so other specs' expectations about the demo expert's queue hold.
  const expertEmail = `pilot-expert-${Date.now()}@parley.local`
  await signIn(page, 'admin@parley.local')
  await page.goto('/admin/users')
  const userForm = page.locator('form', { has: page.getByRole('button', { name: 'Create user' }) })
  await userForm.getByLabel('Name').fill('Pia Pilot')
  await userForm.getByLabel('Email').fill(expertEmail)
  await userForm.getByLabel('Role').selectOption('expert')
  await userForm.getByLabel('Initial password').fill('pilot password')
  await userForm.getByRole('button', { name: 'Create user' }).click()
  await expect(page.getByRole('status')).toContainText('Created')
  await signOut(page)

  await signIn(page, 'researcher@parley.local')
  await page.goto('/studies/new')
  await page.getByRole('button', { name: 'Create study' }).click()
  await expect(page.getByText('Give the study a name.', { exact: true })).toBeVisible()
  await page.getByLabel('Name').fill(name)
  await page.getByLabel('Description').fill('Does the model explain its reads?')
  await page.getByLabel('Protocol').selectOption('pxp')
  await page.getByRole('button', { name: 'Create study' }).click()
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name)

  const memberForm = page.locator('form', { has: page.getByRole('button', { name: 'Add member' }) })
  await memberForm.getByLabel("Member's email").fill('nobody@parley.local')
  await memberForm.getByRole('button', { name: 'Add member' }).click()
  await expect(memberForm.getByRole('alert')).toContainText('No account has the email nobody@parley.local')
  await memberForm.getByLabel("Member's email").fill(expertEmail)
  await memberForm.getByRole('button', { name: 'Add member' }).click()
  await expect(memberForm.getByRole('status')).toContainText('Member added.')
  // No run yet: nothing to give.
  await expect(page.getByText('No free seats.')).toBeVisible()

  const { runId, sessionId } = await runWithFreeSeat(name)
  await page.reload()
  const assignForm = page.locator('form', { has: page.getByRole('button', { name: 'Assign' }) })
  await assignForm.getByLabel('Run and seat').selectOption(`${runId}/h`)
  await assignForm.getByLabel('Assign to').selectOption({ label: `Pia Pilot (${expertEmail})` })
  await assignForm.getByLabel('Sessions').fill('1')
  await assignForm.getByRole('button', { name: 'Assign' }).click()
  await expect(assignForm.getByRole('status')).toContainText(`Assigned ${expertEmail} to 1 session.`)
  const [seat] = await sql<{ email: string }>(
    `SELECT u.email FROM "SessionSeat" p JOIN "user" u ON u.id = p."userId" WHERE p."sessionId" = $1`,
    [sessionId],
  )
  expect(seat?.email).toBe(expertEmail)
  await signOut(page)

  await signIn(page, expertEmail, 'pilot password')
  await page.goto('/work')
  const row = page.locator(`tr[data-session-id="${sessionId}"]`)
  await expect(row).toContainText('awaiting you')
  await row.getByRole('link').first().click()
  await expect(page).toHaveURL(new RegExp(`/sessions/${sessionId}$`))
  await expect(page.getByTestId('seat-h')).toContainText('you')
})

test('settings: a user creates an API key and calls the REST API with it', async ({ page, request }) => {
  await signIn(page, 'viewer@parley.local')
  await page.goto('/settings')
  await page.getByLabel('Key name').fill('dashboard export')
  await page.getByRole('button', { name: 'Create API key' }).click()
  const key = (await page.getByTestId('new-api-key').textContent())?.trim() ?? ''
  expect(key).toMatch(/^pk_[0-9a-f]{8}_/)
  const res = await request.get('/api/v1/studies', { headers: { authorization: `Bearer ${key}` } })
  expect(res.status()).toBe(200)
  const body = await res.json()
  expect(body.items.map((s: { id: string }) => s.id)).toContain('demo-study')
  // A viewer's key cannot create studies.
  const post = await request.post('/api/v1/studies', {
    headers: { authorization: `Bearer ${key}` },
    data: { name: 'nope' },
  })
  expect(post.status()).toBe(403)
  // After a reload the key is no longer shown anywhere in the page.
  await page.reload()
  expect(await page.content()).not.toContain(key)
})
