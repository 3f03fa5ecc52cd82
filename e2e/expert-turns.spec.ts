import { randomUUID } from 'node:crypto'
import { type FakeLlmServer, startFakeLlmServer } from '../lib/llm/fake-server'
import { expect, test } from './fixtures'
import { fakeConnection, signIn, sql } from './helpers'

/**
 * The expert's form turn by turn (issue #12): every turn starts clean, so a judgement made about
 * the machine's previous answer can never be sent again about its new one.
 */
let fake: FakeLlmServer
const TRUTH = { y: 'CCO.CC(=O)O', e: 'Fischer esterification of acetic acid with ethanol.' }

test.beforeAll(async () => {
  fake = await startFakeLlmServer({
    models: ['stubborn', 'judge-no'],
    script: [
      // The machine keeps its wrong answer; the checker never agrees.
      { match: { model: 'stubborn' }, replies: [{ text: 'Prediction: CCO\nPathway: A reduction of the ester.' }] },
      { match: { model: 'judge-no' }, replies: [{ text: 'No' }] },
    ],
  })
})
/** Sessions this spec made: finished afterwards, so they never crowd other specs' queues. */
const made: string[] = []
test.afterAll(async () => {
  await fake.close()
  await sql(`UPDATE "ProtocolSession" SET status = 'done', "awaitingSeat" = NULL WHERE id = ANY($1)`, [made])
})

/** A session awaiting the demo expert after the machine's first (wrong) message. */
async function drugSession(task: 'drug' | 'rad' = 'drug') {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const connectionId = await fakeConnection({ name: 'fake stubborn', baseUrl: fake.url, model: 'stubborn' })
  const sessionId = `e2e-${randomUUID()}`
  made.push(sessionId)
  const seats = {
    m: {
      kind: 'llm',
      model: { connectionId, model: 'stubborn' },
      helpers: { checker: { connectionId, model: 'judge-no' } },
    },
    h: { kind: 'human', userId: expert?.id, claimable: false },
  }
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'pxp', '1', '{"n":10,"k":3}', $4, $2, $3, 'awaiting', 'h', now())`,
    [
      sessionId,
      JSON.stringify(
        task === 'drug'
          ? { input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e }
          : { input: { image: 'demo-xray-1.png' }, datasetId: 'none', prediction: 'Atelectasis', explanation: 'x' },
      ),
      JSON.stringify(seats),
      task,
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [sessionId, expert?.id])
  const first =
    task === 'drug'
      ? { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction of the ester.' }
      : { seq: 1, sender: 'm', tag: 'INIT', prediction: 'Pneumonia', explanation: 'Consolidation on the right.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', $3, $4, $5)`,
    [randomUUID(), sessionId, first.prediction, first.explanation, JSON.stringify(first)],
  )
  return sessionId
}

test('each turn starts from a clean form: no judgement, answer or tag carried over from the last one', async ({
  page,
}) => {
  const sessionId = await drugSession()
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  const match = () => page.getByRole('group', { name: 'Does the prediction match yours?' })
  const agree = () => page.getByRole('group', { name: 'Does the explanation agree with yours?' })

  // Message 2: No / No, the expert's own answer → REFUTE.
  await match().getByLabel('No').check()
  await agree().getByLabel('No').check()
  await page.getByLabel('Your prediction').fill(TRUTH.y)
  await page.getByLabel('Your explanation').fill(TRUTH.e)
  await expect(page.getByTestId('derived-tag')).toContainText('Tag: REFUTE')
  await page.getByRole('button', { name: 'Send' }).click()

  // The machine keeps its answer (message 3); the form for message 4 opens.
  const thread = page.getByRole('list', { name: 'Messages' })
  await expect(thread.getByRole('listitem')).toHaveCount(3)
  await expect(page.getByRole('heading', { name: 'Your response (message 4)' })).toBeVisible()

  // Nothing is carried over: both questions unanswered, empty answer, no tag derived.
  for (const group of [match(), agree()])
    for (const v of ['Yes', 'No']) await expect(group.getByLabel(v)).not.toBeChecked()
  await expect(page.getByLabel('Your prediction')).toHaveValue('')
  await expect(page.getByLabel('Your explanation')).toHaveValue('')
  await expect(page.getByTestId('derived-tag')).toHaveCount(0)
  await expect(page.getByRole('combobox', { name: 'Send as' })).toHaveCount(0)

  // Starting from the last answer is one explicit click, and still derives no tag.
  await page.getByRole('button', { name: 'Start from my last answer' }).click()
  await expect(page.getByLabel('Your prediction')).toHaveValue(TRUTH.y)
  await expect(page.getByLabel('Your explanation')).toHaveValue(TRUTH.e)
  await expect(page.getByTestId('derived-tag')).toHaveCount(0)

  // Ctrl+Enter before both questions are answered sends nothing and says why.
  await page.getByLabel('Your explanation').press('Control+Enter')
  await expect(page.getByText('Answer both questions about your partner’s message.').first()).toBeVisible()
  await match().getByLabel('No').check()
  await expect(page.getByTestId('derived-tag')).toHaveCount(0)
  await agree().getByLabel('No').check()
  // Only now, with both answered this turn: no match, no agreement, unchanged, after k → REJECT.
  await expect(page.getByTestId('derived-tag')).toContainText('Tag: REJECT')
  const stored = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "ProtocolMessage" WHERE "sessionId" = $1`, [
    sessionId,
  ])
  expect(stored[0]?.n).toBe(3)
})

const count = async (sessionId: string) =>
  (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "ProtocolMessage" WHERE "sessionId" = $1`, [sessionId]))[0]
    ?.n

test('RAD: the prediction is picked from the five labels (keys 1–9), with Parley’s MATCH as a hint', async ({
  page,
}) => {
  const sessionId = await drugSession('rad')
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  const picker = page.getByRole('combobox', { name: 'Your prediction' })
  await expect(picker.getByRole('option')).toHaveText([
    'Choose a label…',
    '1. Atelectasis',
    '2. Pneumonia',
    '3. Pleural Effusion',
    '4. Cardiomegaly',
    '5. Pneumothorax',
  ])
  await page.locator('body').click()
  await page.keyboard.press('2')
  await expect(picker).toHaveValue('Pneumonia')
  await expect(page.getByTestId('match-hint')).toContainText('the machine’s prediction matches yours')
  await page.keyboard.press('1')
  await expect(picker).toHaveValue('Atelectasis')
  await expect(page.getByTestId('match-hint')).toContainText('does not match')
  // The hint informs; the expert's own answer is what counts.
  await page.keyboard.press('y')
  await page.keyboard.press('d')
  await page.getByLabel('Your explanation').fill('Volume loss with a shifted fissure.')
  await expect(page.getByTestId('derived-tag')).toContainText('Tag: REFUTE')
})

/**
 * Records, on every DOM change and before every frame is painted, the MATCH hint beside the text in the
 * prediction field and the message being written, so a test can check that no verdict was ever on
 * screen for another text. (Not on the input event itself: there the field holds the new text before
 * React has rendered anything for it, a state never painted.)
 */
async function recordHint(page: import('@playwright/test').Page) {
  await page.evaluate(() => {
    type Rec = { hint: string; field: string; heading: string }
    const w = window as unknown as { __hint: Rec[] }
    w.__hint = []
    const take = () => {
      const rec = {
        hint: document.querySelector('[data-testid="match-hint"]')?.textContent ?? '',
        field: (document.getElementById('pxp-y') as HTMLInputElement | null)?.value ?? '',
        heading:
          [...document.querySelectorAll('h2')].find((h) => h.textContent?.startsWith('Your response'))?.textContent ??
          '',
      }
      const last = w.__hint.at(-1)
      if (!last || last.hint !== rec.hint || last.field !== rec.field || last.heading !== rec.heading)
        w.__hint.push(rec)
    }
    new MutationObserver(take).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    })
    const frame = () => {
      take()
      requestAnimationFrame(frame)
    }
    requestAnimationFrame(frame)
  })
}

test('the MATCH hint is only ever shown for the text on screen, and a new turn opens without one', async ({ page }) => {
  const sessionId = await drugSession('drug')
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  const hint = page.getByTestId('match-hint')
  const field = page.getByLabel('Your prediction')
  await expect(hint).toContainText('once you give it')
  await recordHint(page)
  // The machine said CCO (message 1); OCC is the same molecule.
  const matching = new Set(['CCO', 'OCC'])
  const verdict = async (y: string) => {
    await field.fill(y)
    await expect(hint).toContainText(matching.has(y) ? 'prediction matches yours' : 'does not match yours')
    await expect(hint).toContainText(`(“${y}”)`)
  }
  for (const y of [TRUTH.y, 'OCC', 'CC', 'CCO']) await verdict(y)
  // Quick edits: the verdict for the text before never stands beside the text after.
  await field.fill(TRUTH.y)
  await verdict('CCO')
  await field.fill('OCC')
  await field.fill('CC')
  await verdict(TRUTH.y)

  // Send message 2; the machine keeps CCO (message 3) and the form for message 4 opens.
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No').check()
  await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('No').check()
  await page.getByLabel('Your explanation').fill(TRUTH.e)
  await page.getByRole('button', { name: 'Send' }).click()
  await expect(page.getByRole('heading', { name: 'Your response (message 4)' })).toBeVisible()
  await expect(field).toHaveValue('')
  await expect(hint).toContainText('once you give it')
  // Long enough for any check the page might still be waiting for to come back.
  await page.waitForTimeout(1500)
  await expect(hint).toContainText('once you give it')
  // At message 4 the hint judges the text on screen too: the machine's CCO against what is typed now.
  await verdict('CCO')
  await verdict(TRUTH.y)

  const records = await page.evaluate(
    () => (window as unknown as { __hint: Array<{ hint: string; field: string; heading: string }> }).__hint,
  )
  expect(records.some((r) => r.heading === 'Your response (message 4)')).toBe(true)
  const wrong = records.filter((r) => {
    const says = r.hint.includes('does not match') ? false : r.hint.includes('matches') ? true : null
    if (says === null) return false
    return !r.field.trim() || says !== matching.has(r.field.trim())
  })
  expect(wrong, 'a verdict shown beside a text it was not computed for').toEqual([])
})

test('DRUG: SMILES are parsed while typing, the expert’s reactants drawn, and an invalid one cannot be sent', async ({
  page,
}) => {
  const sessionId = await drugSession('drug')
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No').check()
  await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('No').check()
  await page.getByLabel('Your prediction').fill('this is not smiles ((((')
  await page.getByLabel('Your explanation').fill('An esterification, read backwards.')
  await expect(page.getByTestId('prediction-problem')).toContainText('RDKit cannot parse')
  await expect(page.getByLabel('Your prediction')).toHaveAttribute('aria-invalid', 'true')
  await page.getByLabel('Your explanation').press('Control+Enter')
  await expect(page.getByText('Your prediction cannot be sent: RDKit cannot parse').first()).toBeVisible()
  // Nothing is lost and nothing is stored.
  await expect(page.getByLabel('Your prediction')).toHaveValue('this is not smiles ((((')
  await expect(page.getByLabel('Your explanation')).toHaveValue('An esterification, read backwards.')
  expect(await count(sessionId)).toBe(1)
  // A valid answer is drawn as it is typed, and goes through.
  await page.getByLabel('Your prediction').fill(TRUTH.y)
  await expect(page.getByTestId('prediction-problem')).toHaveCount(0)
  // The refusal of the send goes with its cause: no RDKit error stays once the SMILES is fixed.
  await expect(page.getByText('RDKit cannot parse')).toHaveCount(0)
  await expect(page.getByLabel('Your prediction')).not.toHaveAttribute('aria-invalid', 'true')
  await expect(page.getByRole('img', { name: `Your reactants: ${TRUTH.y}` })).toBeVisible()
  await expect(page.getByTestId('match-hint')).toContainText('does not match')
  await page.getByRole('button', { name: 'Send' }).click()
  await expect(page.getByRole('list', { name: 'Messages' }).getByRole('listitem')).toHaveCount(3)
})

test('the X-ray viewer takes focus and is driven by keys; the wheel zooms without scrolling the page', async ({
  page,
}) => {
  const sessionId = await drugSession('rad')
  await signIn(page, 'expert@parley.local')
  await page.setViewportSize({ width: 1280, height: 700 })
  await page.goto(`/sessions/${sessionId}`)
  const viewer = page.getByTestId('image-viewer')
  const zoom = page.getByTestId('zoom-level')
  // Reachable with Tab: from the last control before it.
  await page.getByRole('slider', { name: 'Contrast' }).focus()
  await page.keyboard.press('Tab')
  await expect(viewer).toBeFocused()
  await expect(zoom).toHaveText('100%')
  await page.keyboard.press('+')
  await expect(zoom).toHaveText('150%')
  await page.keyboard.press('+')
  await expect(zoom).toHaveText('225%')
  await page.keyboard.press('-')
  await expect(zoom).toHaveText('150%')
  await page.keyboard.press('i')
  await expect(viewer).toHaveAttribute('data-inverted', 'true')
  await page.keyboard.press(']')
  await expect(page.getByTestId('brightness')).toHaveText('110%')
  await page.keyboard.press('}')
  await expect(page.getByTestId('contrast')).toHaveText('110%')
  await page.keyboard.press('0')
  await expect(zoom).toHaveText('100%')
  await expect(viewer).toHaveAttribute('data-inverted', 'false')
  await expect(page.getByTestId('brightness')).toHaveText('100%')
  // The viewer's keys never reach the form's shortcuts ("i", "0" … are not typed or acted on).
  await expect(
    page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('Yes'),
  ).not.toBeChecked()
  // The wheel zooms and leaves the page where it was.
  const box = await viewer.boundingBox()
  if (!box) throw new Error('no viewer')
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  const before = await page.evaluate(() => window.scrollY)
  await page.mouse.wheel(0, -200)
  await expect(zoom).toHaveText('120%')
  await page.mouse.wheel(0, 200)
  await expect(zoom).toHaveText('100%')
  expect(await page.evaluate(() => window.scrollY)).toBe(before)
  // A larger default: at least 500 px tall on a 700 px window is not required; 36rem capped at 75vh.
  expect(box.height).toBeGreaterThanOrEqual(500)
})

test('the experiment form warns when experts play the machine against the proxy, and offers tag-only', async ({
  page,
}) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/runs/new')
  await page.getByRole('link', { name: /^PXP \/ INTERACT/ }).click()
  await page.getByRole('link', { name: /^Demo: / }).click()
  const warning = page.getByTestId('proxy-ground-truth-warning')
  await expect(warning).toHaveCount(0)
  await page.getByLabel('Experts play the machine (against an LLM or proxy tester)').check()
  await expect(warning).toContainText('The experts will see the ground truth.')
  await expect(warning.getByLabel(/Only its tag/)).toBeChecked()
  await page.getByLabel('Another LLM').check()
  await expect(warning).toHaveCount(0)
})

test('a draft lives on the server: a second browser of the same expert gets it back', async ({ page, browser }) => {
  const sessionId = await drugSession('drug')
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No').check()
  await page.getByLabel('Your prediction').fill(TRUTH.y)
  await page.getByLabel('Your explanation').fill('Half written on the ward PC.')
  await expect(page.getByTestId('draft-status')).toHaveText('Draft saved')

  const other = await browser.newContext()
  try {
    const second = await other.newPage()
    await signIn(second, 'expert@parley.local')
    await second.goto(`/sessions/${sessionId}`)
    await expect(second.getByTestId('draft-status')).toHaveText('Draft restored')
    await expect(second.getByLabel('Your prediction')).toHaveValue(TRUTH.y)
    await expect(second.getByLabel('Your explanation')).toHaveValue('Half written on the ward PC.')
    await expect(second.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No')).toBeChecked()
  } finally {
    await other.close()
  }
})

test('dialogs open centred, guidelines render as sanitised Markdown, the tab names the case', async ({ page }) => {
  await sql(`UPDATE "Study" SET guidelines = $1 WHERE id = 'demo-study'`, [
    '## Reading order\n\n- **Check** the lines first\n- then the lungs\n\n<script>window.__pwned = 1</script>\n\n[bad](javascript:alert(1))',
  ])
  const sessionId = await drugSession('drug')
  await signIn(page, 'expert@parley.local')
  await page.setViewportSize({ width: 1280, height: 800 })
  await page.goto(`/sessions/${sessionId}`)
  await expect(page).toHaveTitle('CCOC(C)=O · PXP / INTERACT · Parley')
  await page.getByRole('button', { name: 'Guidelines (g)' }).click()
  const dialog = page.getByRole('dialog', { name: 'Study guidelines' })
  await expect(dialog.getByRole('heading', { name: 'Reading order' })).toBeVisible()
  await expect(dialog.locator('li strong')).toHaveText('Check')
  await expect(dialog.locator('script')).toHaveCount(0)
  await expect(dialog.getByText('## Reading order')).toHaveCount(0)
  await expect(dialog.getByText('bad')).not.toHaveAttribute('href', /javascript/)
  const centred = async (name: string) => {
    const box = await page.getByRole('dialog', { name }).boundingBox()
    if (!box) throw new Error(`no ${name} dialog`)
    expect(Math.abs(box.x + box.width / 2 - 640)).toBeLessThan(3)
    expect(Math.abs(box.y + box.height / 2 - 400)).toBeLessThan(3)
  }
  await centred('Study guidelines')
  await page.keyboard.press('Escape')
  await page.locator('body').click()
  await page.keyboard.press('?')
  await centred('Keyboard shortcuts')
  await page.keyboard.press('Escape')
  // The instance panel stays in view on a long dialogue.
  await expect(page.getByTestId('instance-panel')).toHaveCSS('position', 'sticky')
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
})

test('My work shows progress through a run; an ended session offers the next one in place', async ({ page }) => {
  const sessionId = await drugSession('drug')
  const [run] = await sql<{ id: string }>(
    `SELECT e.id FROM "Run" e JOIN "ProtocolSession" s ON s."runId" = e.id
       JOIN "SessionSeat" p ON p."sessionId" = s.id JOIN "user" u ON u.id = p."userId"
      WHERE u.email = 'expert@parley.local' LIMIT 1`,
  )
  await signIn(page, 'expert@parley.local')
  await page.goto('/work')
  await expect(page.getByTestId('run-progress').first()).toHaveText(/\d+ of \d+ done/)
  expect(run).toBeTruthy()
  // The session ends (the expert rejects after k): the page offers the next session where the form was.
  await sql(`UPDATE "ProtocolSession" SET config = '{"n":2,"k":1}' WHERE id = $1`, [sessionId])
  await page.goto(`/sessions/${sessionId}`)
  await page.getByRole('group', { name: 'Does the prediction match yours?' }).getByLabel('No').check()
  await page.getByRole('group', { name: 'Does the explanation agree with yours?' }).getByLabel('No').check()
  await page.getByLabel('Your prediction').fill(TRUTH.y)
  await page.getByLabel('Your explanation').fill(TRUTH.e)
  await page.getByRole('button', { name: 'Send' }).click()
  const over = page.getByTestId('session-over')
  await expect(over).toBeVisible()
  await expect(over.getByRole('link', { name: 'Next session →' })).toHaveAttribute('href', /\/sessions\//)
  // Optionally it goes on by itself, after a countdown.
  const href = await over.getByRole('link', { name: 'Next session →' }).getAttribute('href')
  await over.getByLabel('Open the next session by itself when a session ends').check()
  await expect(over.getByRole('status')).toContainText('Opening the next session')
  await expect(page).toHaveURL(new RegExp(`${href}$`), { timeout: 8000 })
})

test('sessions awaiting the expert in one run are listed by position, the run where its oldest waits', async ({
  page,
}) => {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const runId = `e2e-order-${randomUUID()}`
  await sql(
    `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, status, "updatedAt")
     VALUES ($1, 'demo-study', 'ordered run', 'pxp', 'drug', 'none', '{"n":10,"k":3,"carryOver":false}', '{}', 1, 'running', now())`,
    [runId],
  )
  const ids: string[] = []
  // Position 1 has waited longer than position 0: the list still goes 0, 1.
  for (const [position, age] of [
    [0, '1 minute'],
    [1, '2 minutes'],
  ] as const) {
    const id = `e2e-order-${position}-${randomUUID()}`
    ids.push(id)
    made.push(id)
    await sql(
      `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", position, "updatedAt")
       VALUES ($1, 'demo-study', $2, 'pxp', '1', '{"n":10,"k":3}', 'drug', $3, $4, 'awaiting', 'h', $5, '1990-01-01'::timestamp - interval '${age}')`,
      [
        id,
        runId,
        JSON.stringify({ input: { smiles: `C${'C'.repeat(position)}O` }, prediction: 'CO', explanation: 'x' }),
        JSON.stringify({
          m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
          h: { kind: 'human', userId: expert?.id, claimable: false },
        }),
        position,
      ],
    )
    await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [id, expert?.id])
  }
  await signIn(page, 'expert@parley.local')
  await page.goto('/work?queue=yours')
  const rows = page.getByRole('table', { name: 'Your sessions' }).locator('tbody tr')
  await expect(rows.nth(0)).toHaveAttribute('data-session-id', ids[0] as string)
  await expect(rows.nth(1)).toHaveAttribute('data-session-id', ids[1] as string)
  await expect(rows.nth(0).getByTestId('run-progress')).toHaveText('· 0 of 2 done')
  await expect(page.getByRole('link', { name: 'Next session' })).toHaveAttribute('href', `/sessions/${ids[0]}`)
  // Done with this run's sessions for the next specs: they must not stay at the top of the queue.
  await sql(`UPDATE "ProtocolSession" SET status = 'done', "awaitingSeat" = NULL WHERE "runId" = $1`, [runId])
})

test('an expert in the machine seat of a tag-only run sees the proxy tester’s tag, not the reference answer', async ({
  page,
}) => {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const sessionId = `e2e-tag-only-${randomUUID()}`
  made.push(sessionId)
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'pxp', '1', '{"n":10,"k":3,"proxyAnswer":"tag-only"}', 'drug', $2, $3, 'awaiting', 'm', now())`,
    [
      sessionId,
      JSON.stringify({ input: { smiles: 'CCOC(C)=O' }, prediction: TRUTH.y, explanation: TRUTH.e }),
      JSON.stringify({
        m: { kind: 'human', userId: expert?.id, claimable: false },
        h: { kind: 'proxy', helpers: { checker: { connectionId: 'none' } }, params: {} },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'm', $2)`, [sessionId, expert?.id])
  const messages = [
    { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction of the ester.' },
    { seq: 2, sender: 'h', tag: 'REFUTE', prediction: TRUTH.y, explanation: TRUTH.e },
  ]
  for (const m of messages)
    await sql(
      `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        randomUUID(),
        sessionId,
        m.seq,
        m.sender,
        m.sender === 'm' ? 'h' : 'm',
        m.tag,
        m.prediction,
        m.explanation,
        JSON.stringify(m),
      ],
    )
  await signIn(page, 'expert@parley.local')
  const response = await page.goto(`/sessions/${sessionId}`)
  const thread = page.getByRole('list', { name: 'Messages' })
  await expect(thread.getByRole('listitem').nth(1)).toContainText('REFUTE')
  await expect(thread.getByRole('listitem').nth(1).getByTestId('hidden-answer')).toContainText('Only the tag is shown')
  // Not on the screen, and not anywhere in what the page sent.
  await expect(page.getByText(TRUTH.e)).toHaveCount(0)
  expect(await response?.text()).not.toContain(TRUTH.e)
  expect(await page.content()).not.toContain(TRUTH.e)
  await expect(page.getByRole('heading', { name: 'Your response (message 3)' })).toBeVisible()
})

test('a debate turn’s draft lives on the server too: a second browser gets it back', async ({ page, browser }) => {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const sessionId = `e2e-debate-draft-${randomUUID()}`
  made.push(sessionId)
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'evince', '1', '{"k":3,"crit":false,"report":false}', 'diagnosis', $2, $3, 'awaiting', 'A', now())`,
    [
      sessionId,
      JSON.stringify({ input: { symptoms: 'draft case: fever, rash, joint pain' }, prediction: '', explanation: '' }),
      JSON.stringify({
        A: { kind: 'human', userId: expert?.id, claimable: false },
        B: { kind: 'llm', model: { connectionId: 'none' }, helpers: {} },
        moderator: { kind: 'program', program: 'no-judge', helpers: {}, params: {} },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'A', $2)`, [sessionId, expert?.id])
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  await page.getByLabel('Diagnosis 1').fill('Dengue')
  await page.getByLabel('Justification 1').fill('Fever with a rash after travel.')
  // The server copy is written shortly after typing stops.
  await expect
    .poll(async () => (await sql(`SELECT 1 FROM "TurnDraft" WHERE "sessionId" = $1`, [sessionId])).length)
    .toBe(1)

  const other = await browser.newContext()
  try {
    const second = await other.newPage()
    await signIn(second, 'expert@parley.local')
    await second.goto(`/sessions/${sessionId}`)
    await expect(second.getByLabel('Diagnosis 1')).toHaveValue('Dengue')
    await expect(second.getByLabel('Justification 1')).toHaveValue('Fever with a rash after travel.')
  } finally {
    await other.close()
  }
})
