import { randomUUID } from 'node:crypto'
import { expect, test } from '@playwright/test'
import { signIn, sql } from './helpers'

/** A run with one session in a study, as SQL (the pages only read it). */
async function runIn(studyId: string, protocol: string, name: string) {
  const id = `e2e-${randomUUID()}`
  await sql(
    `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, "updatedAt")
     VALUES ($1, $2, $3, $4, 'drug', 'none', '{"n":10,"k":3}', '{}', 1, now())`,
    [id, studyId, name, protocol],
  )
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, "updatedAt")
     VALUES ($1, $2, $1, $3, '1', '{"n":10,"k":3}', 'drug', $4, '{}', now())`,
    [id, studyId, protocol, JSON.stringify({ input: { smiles: 'CCO' }, prediction: 'CC=O', explanation: 'oxidation' })],
  )
  return id
}

test('old experiment and debate URLs redirect to the run pages after a scoped lookup', async ({ page }) => {
  const run = await runIn('demo-study', 'pxp', `old urls ${Date.now()}`)
  await signIn(page, 'researcher@parley.local')
  const cases: Array<[string, RegExp]> = [
    ['/experiments', /\/runs$/],
    ['/experiments?studyId=demo-study', /\/runs\?studyId=demo-study$/],
    ['/experiments/new?studyId=demo-study', /\/runs\/new\?studyId=demo-study$/],
    ['/debates', /\/runs$/],
    ['/debates/new', /\/runs\/new$/],
    [`/experiments/${run}`, new RegExp(`/runs/${run}$`)],
    [`/experiments/${run}/dashboard`, new RegExp(`/runs/${run}/dashboard$`)],
    [`/experiments/${run}/sessions/${run}`, new RegExp(`/runs/${run}/sessions/${run}$`)],
    [`/debates/${run}`, new RegExp(`/runs/${run}$`)],
    [`/debates/sessions/${run}`, new RegExp(`:\\d+/sessions/${run}$`)],
    ['/sessions', /\/work$/],
  ]
  for (const [from, to] of cases) {
    const res = await page.goto(from)
    expect(res?.status(), from).toBe(200)
    await expect(page, from).toHaveURL(to)
  }
  await page.goto(`/experiments/${run}`)
  await expect(page.getByRole('heading', { level: 1 })).toContainText('old urls')
})

test("another researcher's run answers 404 at every old URL, exactly like an id that does not exist", async ({
  page,
}) => {
  // A study of another researcher: the demo researcher is not a member.
  const study = `e2e-other-${randomUUID()}`
  await sql(`INSERT INTO "Study" (id, name, "updatedAt") VALUES ($1, 'Someone else''s study', now())`, [study])
  const hidden = await runIn(study, 'evince', 'hidden run')
  const missing = `e2e-missing-${randomUUID()}`
  await signIn(page, 'researcher@parley.local')
  for (const id of [hidden, missing]) {
    for (const path of [
      `/experiments/${id}`,
      `/experiments/${id}/dashboard`,
      `/experiments/${id}/sessions/${id}`,
      `/debates/${id}`,
      `/debates/sessions/${id}`,
    ]) {
      const res = await page.goto(path)
      expect(res?.status(), path).toBe(404)
      // No redirect happened: the URL does not reveal where the run would live.
      expect(new URL(page.url()).pathname, path).toBe(path)
      await expect(page.getByText('hidden run')).toHaveCount(0)
    }
  }
})
