import { expect, test } from '@playwright/test'
import { signIn, signOut, sql } from './helpers'

// A 1×1 PNG (the bytes do not matter to the route, only who may read them).
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
)

test('an expert reads the image of their own session and gets 404 for another instance of the same dataset', async ({
  page,
}) => {
  const id = `e2e-roles-${Date.now()}`
  await sql(
    `INSERT INTO "Dataset" (id, "studyId", name, kind, source) VALUES ($1, 'demo-study', 'RAD roles', 'rad', 'rad.csv')`,
    [id],
  )
  await sql(
    `INSERT INTO "Instance" (id, "datasetId", index, input, prediction, explanation) VALUES
       ($1 || '-0', $1, 0, '{"image":"mine.png"}', 'Pneumonia', 'opacity'),
       ($1 || '-1', $1, 1, '{"image":"other.png"}', 'Normal', 'clear')`,
    [id],
  )
  await sql(
    `INSERT INTO "Asset" (id, "datasetId", name, mime, bytes) VALUES
       ($1 || '-a', $1, 'mine.png', 'image/png', $2), ($1 || '-b', $1, 'other.png', 'image/png', $2)`,
    [id, PNG],
  )
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, "instanceId", instance, seats, "updatedAt")
     SELECT $1, 'demo-study', 'pxp', '1', '{"n":10,"k":3}', 'rad', $1 || '-0',
            jsonb_build_object('input', '{"image":"mine.png"}'::jsonb, 'prediction', 'Pneumonia', 'explanation', 'opacity', 'datasetId', $1::text),
            jsonb_build_object('m', '{"kind":"proxy","helpers":{"checker":{"connectionId":"builtin-demo"}},"params":{}}'::jsonb,
                               'h', jsonb_build_object('kind', 'human', 'userId', u.id, 'claimable', false)), now()
     FROM "user" u WHERE u.email = 'expert2@parley.local'`,
    [id],
  )
  await sql(
    `INSERT INTO "SessionSeat" ("sessionId", seat, "userId") SELECT $1, 'h', u.id FROM "user" u WHERE u.email = 'expert2@parley.local'`,
    [id],
  )
  await signIn(page, 'expert2@parley.local')
  const mine = await page.request.get(`/api/assets/${id}/mine.png`)
  expect(mine.status()).toBe(200)
  expect(mine.headers()['content-type']).toBe('image/png')
  expect((await page.request.get(`/api/assets/${id}/other.png`)).status()).toBe(404)
  // The session page shows their image.
  await page.goto(`/sessions/${id}`)
  const img = page.getByRole('img', { name: 'The X-ray of this case' })
  await expect(img).toBeVisible()
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBeGreaterThan(0)
  await signOut(page)

  // A viewer member of the study reads every image of it.
  await signIn(page, 'viewer@parley.local')
  expect((await page.request.get(`/api/assets/${id}/other.png`)).status()).toBe(200)
})

test("a study admin changes a member's study role on the study page; a viewer member only sees the roles", async ({
  page,
}) => {
  const name = `Roles e2e ${Date.now()}`
  await signIn(page, 'researcher@parley.local')
  await page.goto('/studies/new')
  await page.getByLabel('Name').fill(name)
  await page.getByRole('button', { name: 'Create study' }).click()
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name)
  const studyId = page.url().split('/').pop() as string
  const roleOf = (email: string) => page.getByRole('combobox', { name: `Study role of ${email}`, exact: true })

  const memberForm = page.locator('form', { has: page.getByRole('button', { name: 'Add member' }) })
  const added: Array<[string, string]> = [
    ['annotator@parley.local', 'annotator'],
    ['viewer@parley.local', 'viewer'],
  ]
  for (const [email, role] of added) {
    await memberForm.getByLabel("Member's email").fill(email)
    await memberForm.getByLabel('Role in this study').selectOption(role)
    await memberForm.getByRole('button', { name: 'Add member' }).click()
    await expect(memberForm.getByRole('status')).toContainText('Member added.')
  }
  // The creator is the study's admin.
  await expect(roleOf('researcher@parley.local')).toHaveValue('admin')
  // An annotator account may be an adjudicator, expert or annotator (or viewer) here, never a researcher.
  const annotatorRole = roleOf('annotator@parley.local')
  await expect(annotatorRole.locator('option')).toHaveText(['Adjudicator', 'Expert', 'Annotator', 'Viewer'])
  await annotatorRole.selectOption('expert')
  await page.getByRole('button', { name: 'Change the study role of annotator@parley.local' }).click()
  await expect(page.getByRole('status').filter({ hasText: 'annotator@parley.local is now expert' })).toBeVisible()
  await page.reload()
  await expect(roleOf('annotator@parley.local')).toHaveValue('expert')
  const audit = await sql<{ before: { role: string }; after: { role: string } }>(
    `SELECT before, after FROM "AuditLog" WHERE action = 'study.set-member-role' AND "studyId" = $1`,
    [studyId],
  )
  expect(audit).toEqual([expect.objectContaining({ before: expect.objectContaining({ role: 'annotator' }) })])
  expect(audit[0]?.after.role).toBe('expert')
  await signOut(page)

  // The viewer member reads the study and its members' roles, and is offered no change.
  await signIn(page, 'viewer@parley.local')
  await page.goto(`/studies/${studyId}`)
  const members = page.getByRole('list', { name: 'Members' })
  await expect(members.getByText('Study admin', { exact: true })).toBeVisible()
  await expect(members.getByText('Expert', { exact: true })).toBeVisible()
  await expect(roleOf('annotator@parley.local')).toHaveCount(0)
  await expect(page.getByRole('button', { name: 'Add member' })).toHaveCount(0)
  await expect(page.getByRole('button', { name: /Archive study/ })).toHaveCount(0)
  await expect(page.getByRole('button', { name: /Remove/ })).toHaveCount(0)
})
