/**
 * `npm run bench:priority`: how long an expert waits for the machine's answer while a large batch run
 * works on the same workers.
 *
 * A PXP batch of `--batch` proxy-tester sessions (message bound 10, the fake model always wrong, so every
 * session runs its whole bound) starts on `--concurrency` in-process workers; once its steps fill the
 * queue, an expert (a real account, seat h of a PXP session of another run) sends `--turns` turns one
 * after another, each as soon as the machine's answer to the previous one is there. The figure is each
 * turn's wait: from the submit's return to the machine's reply being written. With one queue served in
 * order, that wait is the time the batch's queued quanta take ahead of it. Also: the batch's wall time
 * (so a priority for people is not bought by a slower batch) and, with `--max-in-flight`, the batch run's
 * most sessions seen in flight at once.
 *
 * A throwaway database on the server in DATABASE_URL, or the embedded PostgreSQL; the fake model in a
 * child process. Last line: one JSON object.
 *
 *   npx tsx scripts/bench-priority.ts [--batch 500] [--latency 20] [--concurrency 4] [--turns 5]
 *                                     [--max-in-flight 0]
 */
import { benchArgs } from './bench-args'
import { benchWorld, esterDataset, fakeLlmChild, quantile, round, throwawayDatabase } from './bench-support'

const values = benchArgs(
  `Usage: npm run bench:priority -- [options]

An expert's wait for the machine's answer while a batch run works on the same workers (a throwaway
database on the server in DATABASE_URL, or the embedded PostgreSQL). Last line: JSON.

  --batch N           proxy-tester sessions in the batch run (default 500)
  --latency MS        model latency (default 20)
  --concurrency N     steps at once, in this process (default 4)
  --turns N           expert turns measured (default 4; a PXP session with bound 10 allows 4)
  --max-in-flight N   the batch run's limit of sessions in flight (default 0: none)
  -h, --help          this text`,
  {
    batch: { type: 'string', default: '500' },
    latency: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    turns: { type: 'string', default: '4' },
    'max-in-flight': { type: 'string', default: '0' },
  },
)
const BATCH = Number(values.batch)
const LATENCY = Number(values.latency)
const CONCURRENCY = Number(values.concurrency)
const TURNS = Number(values.turns)
const MAX_IN_FLIGHT = Number(values['max-in-flight'])
/** A wait longer than this is recorded as this (the batch would otherwise have to finish first). */
const WAIT_CAP_MS = 120_000

const database = await throwawayDatabase({ prefix: 'parley_bench_priority' })
const fake = await fakeLlmChild({
  latencyMs: LATENCY,
  script: [
    { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.' }] },
    { match: { model: 'judge' }, replies: [{ text: 'No' }] },
  ],
})

const { db, sql } = await import('../lib/server/db')
const { execute } = await import('../lib/server/operation')
const { createRun, startRun } = await import('../lib/server/services/runs')
const { submitTurn } = await import('../lib/server/services/sessions')
const { startWorkers } = await import('../lib/server/engine/jobs')

let summary = ''
try {
  const { actor, study, conn } = await benchWorld({
    baseURL: fake.url,
    defaultModel: 'gen',
    maxConcurrency: CONCURRENCY * 2,
  })
  const expertUser = await db.user.create({
    data: {
      id: `bench-expert-${Date.now()}`,
      email: 'expert@bench.parley',
      name: 'Expert',
      role: 'expert',
      emailVerified: true,
    },
  })
  await db.studyMember.create({ data: { studyId: study.id, userId: expertUser.id, role: 'expert' } })
  const expert = {
    userId: expertUser.id,
    email: expertUser.email,
    name: expertUser.name,
    role: 'expert' as const,
    via: 'cli' as const,
  }
  const dataset = (name: string, n: number) => esterDataset(study.id, name, n)
  const batchData = await dataset('batch', BATCH)
  const expertData = await dataset('expert', 1)
  const models = {
    generator: { connectionId: conn.id, model: 'gen' },
    checker: { connectionId: conn.id, model: 'judge' },
  }
  const created = await execute(createRun, actor, {
    protocol: 'pxp',
    studyId: study.id,
    name: 'batch',
    datasetId: batchData.id,
    n: 10,
    k: 3,
    carryOver: 'false',
    ...(MAX_IN_FLIGHT > 0 ? { maxInFlight: MAX_IN_FLIGHT } : {}),
    ...models,
  })
  if (!created.ok) throw new Error(created.error)
  const batchRun = created.data.id
  const expertRun = await execute(createRun, actor, {
    protocol: 'pxp',
    studyId: study.id,
    name: 'with an expert',
    datasetId: expertData.id,
    // Long enough for every turn, and no REJECT before it (REJECT is allowed only after message k).
    n: 2 + 2 * TURNS,
    k: 2 + 2 * TURNS,
    tester: 'expert',
    expertIds: [expert.userId],
    ...models,
  })
  if (!expertRun.ok) throw new Error(expertRun.error)
  const expertSession = expertRun.data.firstSessionId as string

  const workers = await startWorkers(CONCURRENCY)
  /** The session's message count and whether it waits for the expert. */
  const state = async () => {
    const { rows } = await sql().query<{ status: string; messages: number }>(
      `SELECT s.status, (SELECT count(*)::int FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS messages
       FROM "ProtocolSession" s WHERE s.id = $1`,
      [expertSession],
    )
    return rows[0] as { status: string; messages: number }
  }
  const awaitExpert = async (atLeast: number, since: number) => {
    for (;;) {
      const s = await state()
      if ((s.status === 'awaiting' || s.status === 'done') && s.messages >= atLeast) return performance.now() - since
      if (performance.now() - since > WAIT_CAP_MS) return WAIT_CAP_MS
      await new Promise((r) => setTimeout(r, 5))
    }
  }
  // The expert's session opens (the machine's first message) before the batch starts.
  const start = await execute(startRun, actor, { runId: expertRun.data.id })
  if (!start.ok) throw new Error(start.error)
  await awaitExpert(1, performance.now())

  let inFlightPeak = 0
  const t0 = performance.now()
  const batchStart = await execute(startRun, actor, { runId: batchRun })
  if (!batchStart.ok) throw new Error(batchStart.error)
  let batchDone = false
  const watch = (async () => {
    while (!batchDone) {
      // In flight as the limit counts it: the run's sessions with a step queued or being worked.
      const { rows } = await sql().query<{ status: string; open: number }>(
        `SELECT e.status, (SELECT count(DISTINCT j.data->>'sessionId')::int FROM pgboss.job j
            WHERE j.name = 'session-step' AND j.state IN ('created', 'retry', 'active')
              AND j.data->>'runId' = e.id) AS open
         FROM "Run" e WHERE e.id = $1`,
        [batchRun],
      )
      inFlightPeak = Math.max(inFlightPeak, rows[0]?.open ?? 0)
      if (rows[0]?.status === 'done') batchDone = true
      else await new Promise((r) => setTimeout(r, 50))
    }
    return performance.now() - t0
  })()
  // Let the batch fill the queue and the workers.
  await new Promise((r) => setTimeout(r, 2000))

  const waits: number[] = []
  let turnsDuringBatch = 0
  for (let t = 0; t < TURNS; t++) {
    const { messages } = await state()
    const sent = await execute(submitTurn, expert, {
      sessionId: expertSession,
      seq: messages + 1,
      matchPrev: false,
      agreePrev: false,
      prediction: 'CCO.CC(=O)O',
      explanation: `Turn ${t + 1}: an esterification.`,
    })
    if (!sent.ok) throw new Error(sent.error)
    waits.push(await awaitExpert(messages + 2, performance.now()))
    if (!batchDone) turnsDuringBatch++
  }
  const batchWallMs = await watch
  await workers.stop()
  const batchMessages = await db.protocolMessage.count({ where: { session: { runId: batchRun } } })

  summary = JSON.stringify({
    bench: 'priority',
    batchSessions: BATCH,
    batchMessages,
    latencyMs: LATENCY,
    concurrency: CONCURRENCY,
    maxInFlight: MAX_IN_FLIGHT || null,
    expertTurns: waits.length,
    /** Turns answered while the batch still ran (the others measured an idle queue). */
    turnsDuringBatch,
    expertWaitMsP50: round(quantile(waits, 0.5), 1),
    expertWaitMsMax: round(Math.max(...waits), 1),
    expertWaitsMs: waits.map((w) => round(w, 1)),
    waitCapMs: WAIT_CAP_MS,
    batchWallSeconds: round(batchWallMs / 1000, 2),
    batchInFlightPeak: inFlightPeak,
  })
} finally {
  fake.stop()
  await database.drop() // releases the queue, the pools and the heartbeat first
}
console.log(summary)
process.exit(0)
