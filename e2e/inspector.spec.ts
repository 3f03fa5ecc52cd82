import { randomUUID } from 'node:crypto'
import { expect, test } from '@playwright/test'
import { signIn, sql } from './helpers'

// A 1×1 PNG: what an X-ray is to the inspector.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='

const system = { role: 'system', content: 'You are a radiologist. Answer with Prediction: and Explanation:.' }
const query = {
  role: 'user',
  content: [
    { type: 'text', text: 'What does this X-ray show?' },
    { type: 'image_url', image_url: { url: 'asset:tiny.png' } },
  ],
}
const m1 = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'Effusion', explanation: 'Blunted costophrenic angle.' }
const m2 = { seq: 2, sender: 'h', tag: 'REFUTE', prediction: 'Atelectasis', explanation: 'Volume loss at the base.' }
const m3 = { seq: 3, sender: 'm', tag: 'REVISE', prediction: 'Atelectasis', explanation: 'Volume loss at the base.' }

/**
 * A carried-over PXP session written as the runner writes it: the machine's contexts refer to the
 * X-ray as `asset:`, the call log by `asset:…#sha256=…`; the third message's first call failed the
 * format check; an old call still holds an inlined data: URL.
 */
async function session() {
  const id = randomUUID()
  const datasetId = `e2e-ds-${id}`
  await sql(`INSERT INTO "Dataset" (id, "studyId", name, kind, source) VALUES ($1, 'demo-study', $2, 'rad', 'e2e')`, [
    datasetId,
    `inspector ${id.slice(0, 6)}`,
  ])
  await sql(`INSERT INTO "Asset" (id, "datasetId", name, mime, bytes) VALUES ($1, $2, 'tiny.png', 'image/png', $3)`, [
    `e2e-a-${id}`,
    datasetId,
    Buffer.from(PNG, 'base64'),
  ])
  const runId = `e2e-run-${id}`
  await sql(
    `INSERT INTO "Run" (id, "studyId", name, protocol, task, "datasetId", config, seats, repetitions, status, "updatedAt")
     VALUES ($1, 'demo-study', 'inspector e2e', 'pxp', 'rad', $2, '{"n":10,"k":3}', '{}', 1, 'running', now())`,
    [runId, datasetId],
  )
  const sessionId = `e2e-s-${id}`
  const seats = {
    m: { kind: 'llm', model: { connectionId: 'none', model: 'gen' }, helpers: { checker: { connectionId: 'none' } } },
    h: { kind: 'proxy', helpers: { checker: { connectionId: 'none' } }, params: {} },
  }
  const instance = {
    input: { image: 'tiny.png' },
    prediction: 'Atelectasis',
    explanation: 'Volume loss at the base.',
    datasetId,
  }
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, status, "updatedAt")
     VALUES ($1, 'demo-study', $2, 'pxp', '1', '{"n":10,"k":3}', 'rad', $3, $4, 'running', now())`,
    [sessionId, runId, JSON.stringify(instance), JSON.stringify(seats)],
  )
  const payloads = [
    { category: null, changed: null },
    { category: 'D', changed: null },
    { category: 'C', changed: true },
  ]
  for (const [i, m] of [m1, m2, m3].entries())
    await sql(
      `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
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
        JSON.stringify(payloads[i]),
      ],
    )
  const asAssistant = (m: typeof m1) => ({
    role: 'assistant',
    content: `Prediction: ${m.prediction}\nExplanation: ${m.explanation}`,
  })
  const asUser = (m: typeof m1) => ({
    role: 'user',
    content: `${m.tag}. Prediction: ${m.prediction}\nExplanation: ${m.explanation}`,
  })
  const contexts: Array<[number, unknown]> = [
    [1, [system, query]],
    [2, { proxy: 'ground truth' }],
    [3, [system, asAssistant(m1), asUser(m2), query]],
  ]
  for (const [seq, context] of contexts)
    await sql(`INSERT INTO "ContextSnapshot" ("sessionId", seq, context) VALUES ($1, $2, $3)`, [
      sessionId,
      seq,
      JSON.stringify(context),
    ])
  const byRef = (messages: unknown[]) =>
    JSON.parse(JSON.stringify(messages).replaceAll('asset:tiny.png', 'asset:tiny.png#sha256=5f0c7e1d2a3b4c5d6e7f'))
  const calls: Array<[string, string, number, string | null, unknown, unknown]> = [
    ['1', 'ok', 1, null, { model: 'gen', messages: byRef([system, query]) }, { text: m1.prediction }],
    [
      '3',
      'error',
      1,
      'invalid_output',
      { model: 'gen', messages: byRef([system, asAssistant(m1), asUser(m2), query]) },
      { text: 'I think it is atelectasis.' },
    ],
    [
      '3',
      'ok',
      2,
      null,
      // An older call logged its image inlined: it is drawn, never printed.
      {
        model: 'gen',
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
        ],
      },
      { text: 'Prediction: Atelectasis' },
    ],
  ]
  for (const [ref, status, attempt, errorKind, request, response] of calls)
    await sql(
      `INSERT INTO "LlmCall" (id, purpose, "studyId", "sessionRef", "messageRef", provider, "modelRequested", params,
                              "promptHash", request, response, status, attempt, "errorKind", error)
       VALUES ($1, 'pxp-generate', 'demo-study', $2, $3, 'openai-compatible', 'gen', '{}', 'h', $4, $5, $6, $7, $8, $9)`,
      [
        randomUUID(),
        sessionId,
        ref,
        JSON.stringify(request),
        JSON.stringify(response),
        status,
        attempt,
        errorKind,
        errorKind ? 'The reply has no "Prediction:" line.' : null,
      ],
    )
  return { runId, sessionId, datasetId }
}

test('the inspector draws images as images, collapses contexts to what is new, and marks failed calls', async ({
  page,
}) => {
  const { runId, sessionId, datasetId } = await session()
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/runs/${runId}/sessions/${sessionId}`)
  await expect(page.getByRole('heading', { name: 'C — contexts and LLM calls' })).toBeVisible()

  // D: the instance's X-ray is drawn (not its file name), the seats are a table naming each model.
  const image = page.getByTestId('instance-fields').getByRole('img', { name: "The instance's image (tiny.png)" })
  await expect(image).toHaveAttribute('src', `/api/assets/${datasetId}/tiny.png`)
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
  const seats = page.getByRole('table', { name: 'Seats of this session' })
  await expect(seats.getByTestId('seat-row-m')).toContainText('gen on a removed connection (none)')
  await expect(seats.getByTestId('seat-row-h')).toContainText('the ground-truth proxy')
  await expect(seats.getByTestId('seat-row-h/checker')).toBeVisible()
  await expect(page.locator('main')).not.toContainText('"kind"')

  // Contexts are collapsed: nothing of the prompts is on the page until asked for.
  await expect(page.getByTestId('prompt-turn')).toHaveCount(0)
  await page.getByRole('button', { name: /Context of message 1 \(2 turns\)/ }).click()
  const xray = page.getByTestId('context-1').getByRole('img', { name: 'Sent to the model: tiny.png' })
  await expect(xray).toBeVisible()
  await expect(xray).toHaveAttribute('src', `/api/assets/${datasetId}/tiny.png`)
  await expect.poll(() => xray.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)

  // The machine's next prompt repeats the first one: only the two new turns show, until all are asked for.
  await page.getByRole('button', { name: /Context of message 3 \(4 turns, 2 new since message 1\)/ }).click()
  const c3 = page.getByTestId('context-3')
  await expect(c3.getByTestId('prompt-turn')).toHaveCount(2)
  await expect(c3.getByTestId('prompt-turn').first()).toContainText('Prediction: Effusion')
  await expect(c3).toContainText("2 turns are the same as in message 1's context and hidden.")
  await c3.getByRole('button', { name: 'Show all 4 turns' }).click()
  await expect(c3.getByTestId('prompt-turn')).toHaveCount(4)
  await expect(c3.getByRole('img', { name: 'Sent to the model: tiny.png' })).toBeVisible()

  // The call that failed the format check says so; the retry that passed is ok.
  const calls3 = page.getByTestId('c-row-3').getByTestId('call')
  await expect(calls3).toHaveCount(2)
  await expect(calls3.nth(0)).toHaveAttribute('data-status', 'failed')
  await expect(calls3.nth(0)).toContainText('failed: the reply did not pass the format check')
  await expect(calls3.nth(0)).not.toContainText('· ok ·')
  await expect(calls3.nth(1)).toHaveAttribute('data-status', 'ok')

  // Requests draw their images too: by reference from the dataset, or an old inlined one as an image.
  const call1 = page.getByTestId('c-row-1').getByTestId('call')
  await call1.getByRole('button').click()
  await expect(call1.getByRole('img', { name: 'Sent to the model: tiny.png' })).toHaveAttribute(
    'src',
    `/api/assets/${datasetId}/tiny.png`,
  )
  await expect(call1).toContainText('sha256 5f0c7e1d2a3b')
  await calls3.nth(1).getByRole('button').click()
  await expect(calls3.nth(1).getByRole('img')).toBeVisible()

  // Changed is "not evaluated" where Procedure 2 did not need it, never a made-up "no".
  await expect(page.getByTestId('m-row-2')).toContainText('changed: not evaluated')
  await expect(page.getByTestId('m-row-3')).toContainText('changed: yes')

  // Nothing on the page is base64 text.
  const text = (await page.locator('main').textContent()) ?? ''
  expect(text).not.toContain(PNG.slice(0, 24))
  expect(text).not.toMatch(/base64/)
})
