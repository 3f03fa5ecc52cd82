import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

test.describe('an expert cannot reach admin pages or other people’s work by URL', () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page, 'expert@parley.local')
  })

  test('admin pages answer 403 and show no data', async ({ page }) => {
    for (const path of ['/admin/users', '/admin/audit', '/studies/new']) {
      const res = await page.goto(path)
      expect(res?.status(), path).toBe(403)
      await expect(page.getByRole('heading', { name: 'Not allowed' })).toBeVisible()
      await expect(page.getByText('admin@parley.local')).toHaveCount(0)
    }
  })

  /** The seeded sessions in which a demo person fills a seat (their work is sessions, not work items). */
  const sessionsOf = async (email: string) =>
    (
      await sql<{ id: string }>(
        `SELECT p."sessionId" AS id FROM "SessionSeat" p JOIN "user" u ON u.id = p."userId"
         WHERE u.email = $1 ORDER BY p."sessionId"`,
        [email],
      )
    ).map((r) => r.id)

  test("another expert's session answers 404; their own opens", async ({ page }) => {
    const [theirs] = await sessionsOf('expert2@parley.local')
    const [mine] = await sessionsOf('expert@parley.local')
    expect(theirs && mine).toBeTruthy()
    const res = await page.goto(`/sessions/${theirs}`)
    expect(res?.status()).toBe(404)
    const own = await page.goto(`/sessions/${mine}`)
    expect(own?.status()).toBe(200)
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible()
  })

  test('the REST API with the session cookie refuses the same things', async ({ page }) => {
    const audit = await page.request.get('/api/v1/audit')
    expect(audit.status()).toBe(403)
    expect((await audit.json()).error).toMatch(/permission/)
    const [theirs] = await sessionsOf('expert2@parley.local')
    const other = await page.request.get(`/api/v1/sessions/${theirs}`)
    expect(other.status()).toBe(404)
    const studies = await page.request.get('/api/v1/studies')
    expect(studies.status()).toBe(403)
    // Their queue lists their own sessions only (awaiting them, or claimable in their studies).
    const mine = await page.request.get('/api/v1/sessions?pageSize=100')
    expect(mine.status()).toBe(200)
    const ids: string[] = (await mine.json()).items.map((w: { id: string }) => w.id)
    const others = new Set(await sessionsOf('expert2@parley.local'))
    expect(ids.some((id) => others.has(id))).toBe(false)
  })
})

test.describe('runs by URL', () => {
  test('an expert gets 403 for run pages, old experiment pages, exports and live streams', async ({ page }) => {
    await signIn(page, 'expert@parley.local')
    for (const path of [
      '/runs',
      '/runs/new',
      '/runs/any/dashboard',
      '/experiments',
      '/experiments/new',
      '/experiments/any/dashboard',
    ]) {
      const res = await page.goto(path)
      expect(res?.status(), path).toBe(403)
    }
    expect((await page.request.get('/api/runs/any/export?table=m')).status()).toBe(403)
    expect((await page.request.get('/api/experiments/any/export?table=m')).status()).toBe(403)
    expect((await page.request.get('/api/live?topic=run:any')).status()).toBe(404)
  })

  test("a researcher gets 404 for another study's run, session and export, at new and old URLs", async ({ page }) => {
    // A study the demo researcher does not belong to, with a run and a session.
    const id = `e2e-private-${Date.now()}`
    await sql(`INSERT INTO "Study" (id, name, "updatedAt") VALUES ($1, 'Private', now())`, [id])
    await sql(
      `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, "updatedAt")
       VALUES ($1, $1, 'secret', 'pxp', 'drug', 'none', '{}', '{}', 1, now())`,
      [id],
    )
    await sql(
      `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, "updatedAt")
       VALUES ($1, $1, $1, 'pxp', '1', '{"n":10,"k":3}', 'drug', '{}', '{}', now())`,
      [id],
    )
    await signIn(page, 'researcher@parley.local')
    for (const path of [
      `/runs/${id}`,
      `/runs/${id}/dashboard`,
      `/runs/${id}/sessions/${id}`,
      `/sessions/${id}`,
      `/experiments/${id}`,
      `/experiments/${id}/dashboard`,
      `/experiments/${id}/sessions/${id}`,
      `/debates/${id}`,
      `/debates/sessions/${id}`,
    ]) {
      const res = await page.goto(path)
      expect(res?.status(), path).toBe(404)
      await expect(page.getByText('secret')).toHaveCount(0)
    }
    for (const path of [
      `/api/runs/${id}/export?table=d`,
      `/api/experiments/${id}/export?table=d`,
      `/api/debates/${id}/export?table=d`,
      `/api/runs/${id}/files/any`,
    ])
      expect((await page.request.get(path)).status(), path).toBe(404)
    expect((await page.request.get(`/api/live?topic=run:${id}`)).status()).toBe(404)
    expect((await page.request.get(`/api/live?topic=session:${id}`)).status()).toBe(404)
  })
})
