import { randomUUID } from 'node:crypto'
import type { APIRequestContext, Page } from '@playwright/test'
import { type FakeLlmServer, type FakeRule, startFakeLlmServer } from '../lib/llm/fake-server'
import { type SandboxStatus, sandboxStatus } from '../protocols/mint/server/sandbox'
import { expect, test } from './fixtures'
import { fakeConnection, signIn, signOut, sql } from './helpers'

/**
 * MINT in the browser (issue 26), against `next start`, whose web process works the queue and runs the
 * Python tool in the real sandbox (bubblewrap), and the fake LLM server as the evaluated model:
 * - an expert gives feedback twice in a live episode (a failing cell, then a wrong proposal) on the
 *   feedback page from My work, and the model solves the task after it;
 * - an episode whose cells attack (a fork bomb whose children never stop, memory exhaustion, a huge
 *   output, an infinite loop up to the 30 s cell limit) while the server's health and a study page keep
 *   answering; each cell's refusal, cut or timeout is recorded and the episode's state survives them.
 * Both need the Python tool: without bubblewrap / python3 they are skipped with the probe's reason
 * (PARLEY_MINT_SANDBOX_REQUIRED=1 makes that a failure, as in the vitest files).
 */
const TASK_SET = 'Demo tasks: word problems (MINT, GSM8K-style)'
// The demo set's first task: 4 trays of 12 rolls, 29 sold, 7 given away → 12.
const FEEDBACK_1 = 'The print names totl, which you never defined; the rolls left are in total.'
const FEEDBACK_2 = 'Check again: 48 is what she baked, not what is left after selling and giving some away.'

const ATTACKS = {
  // Its children swallow every refused fork and spin; the cell returns after 2 s at the process limit.
  forkBomb: `# attack 1: a fork bomb whose children never stop
import os, time
kept = 7
def bomb():
    while True:
        try:
            os.fork()
        except OSError:
            pass
if os.fork() == 0:
    bomb()
time.sleep(2)
print('processes:', sum(p.isdigit() for p in os.listdir('/proc')))`,
  memory: `# attack 2: memory exhaustion
chunks = []
while True:
    chunks.append(bytearray(64 * 1024**2))`,
  output: `# attack 3: a huge output
while True:
    print('x' * 10000)`,
  loop: `# attack 4: an infinite loop
while True:
    pass`,
  after: `# after the attacks
del chunks
import os
print(kept + 5, sum(p.isdigit() for p in os.listdir('/proc')))`,
}
const execute = (code: string) => `<thought> Next cell. </thought>\n<execute>\n${code}\n</execute>`

let fake: FakeLlmServer
let connectionName: string
let sandbox: SandboxStatus

test.beforeAll(async () => {
  sandbox = await sandboxStatus()
  if (!sandbox.available) {
    if (process.env.PARLEY_MINT_SANDBOX_REQUIRED === '1') throw new Error(`sandbox unavailable: ${sandbox.reason}`)
    console.warn(`MINT browser tests skipped: the Python tool is unavailable (${sandbox.reason})`)
  }
  fake = await startFakeLlmServer({
    models: ['gen', 'attacker'],
    // The first rule that fits answers; each matches what the episode's history holds so far.
    script: [
      {
        match: { model: 'gen', contains: '48 is what she baked' },
        replies: [
          {
            text: '<thought> Baked minus sold minus given: 48 - 29 - 7. </thought>\nThe answer is <solution> 12 </solution>.',
          },
        ],
      },
      {
        match: { model: 'gen', contains: 'you never defined' },
        replies: [{ text: '<thought> She baked 4 trays of 12. </thought>\nThe answer is <solution> 48 </solution>.' }],
      },
      {
        match: { model: 'gen' },
        replies: [
          {
            text: '<thought> Rolls baked minus sold and given. </thought>\n<execute>\ntotal = 4 * 12 - 29 - 7\nprint(totl)\n</execute>',
          },
        ],
      },
      {
        match: { model: 'attacker', contains: '# after the attacks' },
        replies: [{ text: '<thought> The state survived. </thought>\nThe answer is <solution> 12 </solution>.' }],
      },
      { match: { model: 'attacker', contains: '# attack 4' }, replies: [{ text: execute(ATTACKS.after) }] },
      { match: { model: 'attacker', contains: '# attack 3' }, replies: [{ text: execute(ATTACKS.loop) }] },
      { match: { model: 'attacker', contains: '# attack 2' }, replies: [{ text: execute(ATTACKS.output) }] },
      { match: { model: 'attacker', contains: '# attack 1' }, replies: [{ text: execute(ATTACKS.memory) }] },
      { match: { model: 'attacker' }, replies: [{ text: execute(ATTACKS.forkBomb) }] },
    ] satisfies FakeRule[],
  })
  const id = `e2e-${randomUUID()}`
  connectionName = `fake mint ${id.slice(-6)}`
  await fakeConnection({ id, name: connectionName, baseUrl: fake.url, model: 'gen' })
})
test.afterAll(async () => {
  await fake?.close()
})

/** The researcher sets up a MINT run of the demo set's first task on the MINT form; its run and session ids. */
async function createMintRun(
  page: Page,
  o: { name: string; model: string; k?: number; expert?: string },
): Promise<{ runId: string; sessionId: string }> {
  await page.goto('/runs/new/mint?studyId=demo-study')
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(o.name)
  const sets = page.getByLabel('Task set')
  await sets.selectOption((await sets.locator('option', { hasText: TASK_SET }).getAttribute('value')) ?? '')
  await page.getByLabel('Only the first N tasks (optional)').fill('1')
  if (o.k) await page.getByLabel('Turns k').fill(String(o.k))
  const agent = page.getByRole('group', { name: 'Evaluated model' })
  await agent.getByLabel('Model', { exact: true }).selectOption({ label: `Connection: ${connectionName} (gen)` })
  await agent.getByLabel('Model override').fill(o.model)
  if (o.expert) {
    const feedback = page.getByRole('group', { name: 'Expert feedback' })
    await feedback.getByLabel('A person of the study').check()
    const person = feedback.getByLabel('Person', { exact: true })
    await person.selectOption(
      (await person.locator('option', { hasText: o.expert }).first().getAttribute('value')) ?? '',
    )
    await page.getByLabel('Form', { exact: true }).selectOption('textual')
    await page.getByLabel('When', { exact: true }).selectOption('dense')
    await page.getByLabel(/Give the feedback provider the ground truth/).check()
  }
  await page.getByRole('button', { name: 'Create run' }).click()
  await expect(page).toHaveURL(/\/runs\/[^/]+$/, { timeout: 30_000 })
  const runId = page.url().split('/').pop() as string
  const [session] = await sql<{ id: string }>('SELECT id FROM "ProtocolSession" WHERE "runId" = $1', [runId])
  expect(session).toBeDefined()
  return { runId, sessionId: session?.id as string }
}

const messages = (sessionId: string) =>
  sql<{
    seq: number
    sender: string
    body: Record<string, unknown>
    payload: Record<string, unknown>
    email: string | null
  }>(
    `SELECT m.seq, m.sender, m.body, m.payload, u.email FROM "ProtocolMessage" m LEFT JOIN "user" u ON u.id = m."authorUserId"
      WHERE m."sessionId" = $1 ORDER BY m.seq`,
    [sessionId],
  )

/** The expert's feedback form for the turn on screen: the trajectory up to `turns` turns, then the form. */
async function awaitFeedbackForm(page: Page, turns: number) {
  await expect(page.getByTestId('mint-turn')).toHaveCount(turns, { timeout: 30_000 })
  await expect(page.getByRole('heading', { name: 'Your feedback as the expert' })).toBeVisible({ timeout: 30_000 })
  return page.getByLabel('Feedback on the latest turn')
}

test('an expert gives feedback twice in a live episode and the model solves the task after it', async ({ page }) => {
  test.skip(!sandbox.available, `MINT's Python tool is unavailable: ${sandbox.available ? '' : sandbox.reason}`)
  test.setTimeout(180_000)
  const name = `MINT with an expert ${Date.now()}`
  await signIn(page, 'researcher@parley.local')
  const { runId, sessionId } = await createMintRun(page, { name, model: 'gen', expert: 'expert@parley.local' })
  await signOut(page)

  // The expert opens the episode from My work once the model's first turn and its cell have run.
  await signIn(page, 'expert@parley.local')
  const link = page.locator(`a[href="/sessions/${sessionId}"]`).first()
  await expect(async () => {
    await page.goto('/work')
    await expect(link).toBeVisible({ timeout: 2_000 })
  }).toPass({ timeout: 30_000 })
  await link.click()
  await expect(page).toHaveURL(new RegExp(`/sessions/${sessionId}$`))
  await expect(page.getByTestId('mint-task')).toContainText('Orla bakes 4 trays')

  // Turn 1: the cell failed (NameError); the countdown; the reference behind its banner; feedback by Ctrl+Enter.
  let box = await awaitFeedbackForm(page, 1)
  const first = page.getByTestId('mint-turn').nth(0)
  await expect(first).toContainText('use tool')
  await expect(first).toContainText('print(totl)')
  await expect(first).toContainText("NameError: name 'totl' is not defined")
  await expect(page.getByTestId('mint-countdown')).toHaveText('4 of 5 steps and 2 of 2 proposals left.')
  const reference = page.getByRole('note').filter({ hasText: 'Do not disclose: the correct solution' })
  await expect(reference).toContainText('12')
  await box.click()
  await page.keyboard.type(FEEDBACK_1)
  await page.keyboard.press('Control+Enter')

  // Turn 2 arrives on the open page: a wrong proposal (48), judged wrong; feedback again, by the button.
  box = await awaitFeedbackForm(page, 2)
  const second = page.getByTestId('mint-turn').nth(1)
  await expect(second).toContainText('propose solution')
  await expect(second).toContainText('wrong')
  await expect(second).toContainText('48')
  await expect(page.getByTestId('mint-turn').nth(0)).toContainText(FEEDBACK_1)
  await expect(page.getByTestId('mint-countdown')).toHaveText('3 of 5 steps and 1 of 2 proposals left.')
  await expect(box).toHaveValue('')
  await box.fill(FEEDBACK_2)
  await page.getByRole('button', { name: 'Send feedback' }).click()

  // Turn 3: the right proposal ends the episode with task_success.
  await expect(page.getByTestId('mint-outcome')).toContainText('Solved (task_success)', { timeout: 30_000 })
  await expect(page.getByTestId('mint-turn')).toHaveCount(3)
  await expect(page.getByTestId('mint-turn').nth(2)).toContainText('correct')
  await expect(page.getByRole('heading', { name: 'Your feedback as the expert' })).toHaveCount(0)

  // The log: the expert wrote both feedback messages, with the time each took; the model read both.
  const log = await messages(sessionId)
  expect(log.map((m) => m.sender)).toEqual(['agent', 'tool', 'feedback', 'agent', 'env', 'feedback', 'agent', 'env'])
  const feedback = log.filter((m) => m.sender === 'feedback')
  expect(feedback.map((m) => [m.body.text, m.email])).toEqual([
    [FEEDBACK_1, 'expert@parley.local'],
    [FEEDBACK_2, 'expert@parley.local'],
  ])
  for (const m of feedback) expect(Number((m.payload as { elapsedMs?: number }).elapsedMs)).toBeGreaterThan(0)
  expect(log.at(-1)?.body).toMatchObject({ sender: 'env', correct: true })
  const lastCall = fake.requests.filter((r) => r.model === 'gen' && r.path.endsWith('/chat/completions')).at(-1)
  const history = JSON.stringify(lastCall?.body)
  expect(history).toContain(JSON.stringify(`Expert feedback:\n${FEEDBACK_1}`).slice(1, -1))
  expect(history).toContain(JSON.stringify(`Expert feedback:\n${FEEDBACK_2}`).slice(1, -1))
  await signOut(page)

  // The researcher's run page: SR 100 % at k = 5, ended by task_success.
  await signIn(page, 'researcher@parley.local')
  await page.goto(`/runs/${runId}`)
  const summary = page.getByTestId('mint-run-summary')
  await expect(summary.locator('div', { hasText: 'SR (micro)' }).locator('dd')).toHaveText('100.00 %', {
    timeout: 30_000,
  })
  await expect(page.getByText('Ended by: task_success 1')).toBeVisible()
  await page.goto(`/sessions/${sessionId}`)
  await expect(page.getByText('solved', { exact: true })).toBeVisible()

  // The episode replays turn by turn: the keys on the bar (the focus is on Next), the buttons, Show all.
  const turns = page.getByTestId('mint-turn')
  const position = page.getByTestId('mint-replay-position')
  await page.getByRole('button', { name: 'Replay turn by turn' }).click()
  await expect(turns).toHaveCount(1)
  await expect(position).toHaveText('Turn 1 of 3')
  await page.keyboard.press('ArrowRight')
  await expect(turns).toHaveCount(2)
  await expect(turns.nth(1)).toContainText('wrong')
  await page.keyboard.press('End')
  await expect(position).toHaveText('Turn 3 of 3')
  await page.getByRole('button', { name: '← Previous' }).click()
  await expect(turns).toHaveCount(2)
  await page.getByRole('button', { name: 'Show all' }).click()
  await expect(turns).toHaveCount(3)
})

interface Probe {
  what: 'health' | 'page'
  start: number
  end: number
  status: number
}

/** Health and a study page, one after the other, until stopped: how long each took and what it answered. */
function probe(request: APIRequestContext) {
  const probes: Probe[] = []
  let running = true
  const done = (async () => {
    while (running) {
      for (const [what, url] of [
        ['health', '/api/v1/health'],
        ['page', '/studies/demo-study'],
      ] as const) {
        const start = Date.now()
        const r = await request.get(url, { timeout: 30_000, maxRedirects: 0 }).catch(() => null)
        probes.push({ what, start, end: Date.now(), status: r?.status() ?? 0 })
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  return {
    probes,
    stop: async () => {
      running = false
      await done
    },
  }
}

test("a cell's attacks are refused or cut while the server keeps answering; the episode's state survives them", async ({
  page,
}) => {
  test.skip(!sandbox.available, `MINT's Python tool is unavailable: ${sandbox.available ? '' : sandbox.reason}`)
  test.setTimeout(180_000)
  const name = `MINT attacks ${Date.now()}`
  await signIn(page, 'researcher@parley.local')
  // The health and the page answer before the attacks (and warm the page up).
  for (const url of ['/api/v1/health', '/studies/demo-study']) expect((await page.request.get(url)).status()).toBe(200)
  const { sessionId } = await createMintRun(page, { name, model: 'attacker', k: 6 })
  const prober = probe(page.request)
  await expect
    .poll(
      async () =>
        (await sql<{ status: string }>('SELECT status FROM "ProtocolSession" WHERE id = $1', [sessionId]))[0]?.status,
      {
        timeout: 120_000,
        intervals: [500],
      },
    )
    .toBe('done')
  await prober.stop()

  // Every probe answered 200, quickly, the whole time (the bounds leave room for a busy CI machine).
  const { probes } = prober
  expect(probes.filter((p) => p.status !== 200)).toEqual([])
  const slowest = (what: Probe['what']) =>
    Math.max(...probes.filter((p) => p.what === what).map((p) => p.end - p.start))
  console.log(
    `MINT attacks: ${probes.length} probes; slowest health ${slowest('health')} ms, study page ${slowest('page')} ms`,
  )
  expect(slowest('health')).toBeLessThan(2_000)
  expect(slowest('page')).toBeLessThan(5_000)

  // Each attack ran in the server's own sandbox while probes were answered: the fork bomb (its 2 s at
  // the process limit) and the infinite loop (its 30 s) each overlap completed probes.
  const runs = await sql<{ input: { code: string }; output: Record<string, unknown>; from: number; to: number }>(
    `SELECT input, output, (extract(epoch FROM "startedAt") * 1000)::float8 AS from,
            (extract(epoch FROM "startedAt") * 1000 + "durationMs")::float8 AS to
       FROM "ProgramRun" WHERE "sessionId" = $1 ORDER BY seq`,
    [sessionId],
  )
  expect(runs).toHaveLength(5)
  const cell = (marker: string) => runs.find((r) => r.input.code.startsWith(marker))
  for (const marker of ['# attack 1', '# attack 4']) {
    const r = cell(marker)
    expect(probes.filter((p) => r && p.start >= r.from && p.end <= r.to).length, marker).toBeGreaterThan(0)
  }

  // What each cell's output says, as the episode recorded it; no cell replayed the episode (its
  // sandbox lived through every attack), and the state of the first cell was still there at the end.
  const output = (marker: string) => (cell(marker)?.output ?? {}) as { output?: string }
  expect(Number(output('# attack 1').output?.match(/^processes: (\d+)$/m)?.[1])).toBeGreaterThanOrEqual(16)
  expect(output('# attack 2')).toMatchObject({ exception: 'MemoryError', limitsHit: 'memory' })
  expect(output('# attack 3')).toMatchObject({
    exception: 'OSError',
    limitsHit: 'output',
    output: `${'x'.repeat(2000)}...\n[Output Truncated]`,
  })
  expect(output('# attack 4')).toMatchObject({ exception: 'TimeoutError', limitsHit: 'timeout' })
  expect(output('# attack 4').output).toContain('TimeoutError: Timed out after 30 seconds.')
  // 12: `kept` from the first cell; 2: bwrap's pid 1 and the driver (the bomb's children ended with their cell).
  expect(output('# after')).toMatchObject({ output: '12 2\n', exitStatus: 0 })
  expect(runs.map((r) => r.output.replayed)).toEqual([0, 0, 0, 0, 0])

  // The researcher reads the episode: the outputs as the model saw them, and the success.
  await page.goto(`/sessions/${sessionId}`)
  const turns = page.getByTestId('mint-turn')
  await expect(turns).toHaveCount(6)
  await expect(turns.nth(1)).toContainText('MemoryError')
  await expect(turns.nth(2)).toContainText('[Output Truncated]')
  await expect(turns.nth(3)).toContainText('TimeoutError: Timed out after 30 seconds.')
  await expect(page.getByTestId('mint-outcome')).toContainText('Solved (task_success)')
  const log = await messages(sessionId)
  expect(log.at(-1)?.body).toMatchObject({ sender: 'env', correct: true })
})
