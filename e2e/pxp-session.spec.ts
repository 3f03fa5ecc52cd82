import { randomUUID } from 'node:crypto'
import { expect, test } from './fixtures'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { fakeConnection, signIn, signOut, sql } from './helpers'

let fake: FakeLlmServer
const TRUTH = { y: 'CCO.CC(=O)O', e: 'Fischer esterification of acetic acid with ethanol.' }

test.beforeAll(async () => {
  fake = await startFakeLlmServer({
    models: ['gen', 'judge'],
    script: [
      { match: { model: 'gen' }, replies: [{ text: `Prediction: ${TRUTH.y}\nPathway: ${TRUTH.e}` }] },
      { match: { model: 'judge' }, replies: [{ text: 'Yes' }] },
    ],
  })
})
test.afterAll(async () => {
  await fake.close()
})

test('an expert refutes, the machine revises, the expert ratifies and the session ends on mutual RATIFY', async ({
  page,
}) => {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const connectionId = await fakeConnection({ name: 'fake for e2e', baseUrl: fake.url, model: 'gen' })
  // The session belongs to a run, so the dashboard can count it afterwards.
  const runId = `e2e-${randomUUID()}`
  await sql(
    `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, status, "updatedAt")
     VALUES ($1, 'demo-study', 'expert e2e', 'pxp', 'drug', 'none', '{"n":10,"k":3,"carryOver":false}', '{}', 1, 'running', now())`,
    [runId],
  )
  const sessionId = `e2e-${randomUUID()}`
  const seats = {
    m: {
      kind: 'llm',
      model: { connectionId, model: 'gen' },
      helpers: { checker: { connectionId, model: 'judge' } },
    },
    h: { kind: 'human', userId: expert?.id, claimable: false },
  }
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', $4, 'pxp', '1', '{"n":10,"k":3}', 'drug', $2, $3, 'awaiting', 'h', now())`,
    [
      sessionId,
      JSON.stringify({ input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e }),
      JSON.stringify(seats),
      runId,
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [sessionId, expert?.id])
  // The machine's first message (a wrong guess), as the runner would have written it.
  const first = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction of the ester.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', 'CCO', 'A reduction of the ester.', $3)`,
    [randomUUID(), sessionId, JSON.stringify(first)],
  )

  await signIn(page, 'expert@parley.local')
  await page.getByRole('link', { name: 'My work' }).click()
  await expect(page.getByText('awaiting you').first()).toBeVisible()
  await expect(page.locator(`tr[data-session-id="${sessionId}"]`)).toContainText('awaiting you')
  await page.goto(`/sessions/${sessionId}`)
  await expect(page.getByText('Product:')).toContainText('CCOC(C)=O')
  await expect(page.getByText('A reduction of the ester.')).toBeVisible()

  // Disagree: no match, no agreement, the expert's own answer → REFUTE (j = 2 ≤ k, answer not changed).
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No').check()
  await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('No').check()
  await page.getByLabel('Your prediction').fill(TRUTH.y)
  await page.getByLabel('Your explanation').fill(TRUTH.e)
  await expect(page.getByTestId('derived-tag')).toContainText('Tag: REFUTE')
  await expect(page.getByTestId('derived-tag')).toContainText('REJECT becomes available after message 3')
  await page.getByRole('button', { name: 'Send' }).click()

  // The machine revises to the expert's answer.
  const thread = page.getByRole('list', { name: 'Messages' })
  await expect(thread.getByRole('listitem')).toHaveCount(3)
  await expect(thread.getByRole('listitem').nth(1)).toContainText('REFUTE')
  await expect(thread.getByRole('listitem').nth(2)).toContainText('REVISE')

  // Each turn starts clean; the expert keeps their answer with one explicit click.
  await page.getByRole('button', { name: 'Start from my last answer' }).click()
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('Yes').check()
  await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('Yes').check()
  await expect(page.getByTestId('derived-tag')).toContainText('Tag: RATIFY')
  await page.getByRole('button', { name: 'Send' }).click()
  await expect(page.getByText('Both agents ratified')).toBeVisible()
  const tags = await sql<{ tag: string }>(
    `SELECT label AS tag FROM "ProtocolMessage" WHERE "sessionId" = $1 ORDER BY seq`,
    [sessionId],
  )
  expect(tags.map((t) => t.tag)).toEqual(['INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY'])

  // Another expert cannot open it by URL.
  await signOut(page)
  await signIn(page, 'expert2@parley.local')
  expect((await page.goto(`/sessions/${sessionId}`))?.status()).toBe(404)

  // The dashboard counts it: h sent REFUTE, RATIFY (one-way, not strong); m sent REVISE, RATIFY
  // (one-way, strong and ultra-strong); so two-way. The finished session also closed its experiment.
  await page.getByRole('button', { name: 'Sign out' }).click()
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/runs/${runId}/dashboard`)
  const cell = (key: string) => page.getByTestId(`fig4-${key}`)
  await expect(cell('oneWay-human')).toHaveAttribute('data-median', '1')
  await expect(cell('oneWay-machine')).toHaveAttribute('data-median', '1')
  await expect(cell('twoWay')).toHaveAttribute('data-median', '1')
  await expect(cell('strong-human')).toHaveAttribute('data-median', '0')
  await expect(cell('strong-machine')).toHaveAttribute('data-median', '1')
  await expect(cell('ultraStrong-human')).toHaveAttribute('data-median', '0')
  await expect(cell('ultraStrong-machine')).toHaveAttribute('data-median', '1')
  await expect(page.getByText('INIT_m REFUTE_h REVISE_m RATIFY_h RATIFY_m').first()).toBeVisible()
  const [exp] = await sql<{ status: string }>(`SELECT status FROM "Run" WHERE id = $1`, [runId])
  expect(exp?.status).toBe('done')
})
