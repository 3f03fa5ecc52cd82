/**
 * `npm run bench:evince`: EVINCE debates on the job queue against the fake LLM, and metric throughput.
 *
 *   - A batch of 300 cases (up to 5 rounds; each round is A, B, CRIT of A, CRIT of B; then the report)
 *     at 100 ms model latency with 16 concurrent steps (one worker process): wall time vs the ideal,
 *     the lower bound max(total LLM time / 16, the longest case's chain of sequential calls).
 *     Target ratio ≤ 1.25.
 *   - Metric computation for 1,000,000 pairs of 10-label distributions (every metric of a round:
 *     two entropies, KL and cross-entropy both ways, JSD, WD, MI, NMI) with the allocation-free
 *     path. Target < 2 s.
 *
 * Uses a throwaway database on the server in DATABASE_URL, or the embedded PostgreSQL. The fake
 * server runs in a child process. Last line: JSON.
 *
 *   npx tsx scripts/bench-evince.ts [--cases 300] [--latency 100] [--concurrency 16] [--pairs 1000000]
 */
import os from 'node:os'
import { benchArgs } from './bench-args'
import { pairMetricsInto } from '../protocols/evince/core/metrics'
import { benchWorld, fakeLlmChild, round, throwawayDatabase } from './bench-support'

const values = benchArgs(
  `Usage: npm run bench:evince -- [options]

EVINCE debates on the job queue against the fake LLM, and metric throughput (a throwaway database
on the server in DATABASE_URL, or the embedded PostgreSQL). Last line: JSON.

  --cases N          debate cases (default 300)
  --latency MS       model latency (default 100)
  --concurrency N    steps at once (default 16)
  --pairs N          distribution pairs of the metric benchmark (default 1000000)
  -h, --help         this text`,
  {
    cases: { type: 'string', default: '300' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
    pairs: { type: 'string', default: '1000000' },
  },
)
const CASES = Number(values.cases)
const LATENCY = Number(values.latency)
const CONCURRENCY = Number(values.concurrency)
const PAIRS = Number(values.pairs)

/** Every metric for `pairs` random 10-label pairs, best of three passes. */
function metricThroughput(pairs: number) {
  const n = 10
  const p = new Float64Array(pairs * n)
  const q = new Float64Array(pairs * n)
  let seed = 42
  const rand = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0
    return seed / 4294967296
  }
  for (const a of [p, q])
    for (let i = 0; i < pairs; i++) {
      let s = 0
      for (let j = 0; j < n; j++) {
        // A third of the labels are absent (top-k lists over a union), the rest random.
        const v = rand() < 0.33 ? 0 : rand()
        a[i * n + j] = v
        s += v
      }
      if (s === 0) a[i * n] = s = 1
      for (let j = 0; j < n; j++) a[i * n + j] = (a[i * n + j] as number) / s
    }
  const out = new Float64Array(10)
  const scratch = new Float64Array(4 * n)
  let best = Number.POSITIVE_INFINITY
  let check = 0
  for (let pass = 0; pass < 3; pass++) {
    const t = performance.now()
    for (let i = 0; i < pairs; i++) {
      pairMetricsInto(p, q, i * n, n, 0.001, out, scratch)
      check += out[8] as number
    }
    best = Math.min(best, performance.now() - t)
  }
  if (!Number.isFinite(check)) throw new Error('a metric was not finite')
  return best
}

const metricMs = metricThroughput(PAIRS)

const database = await throwawayDatabase()

// The debaters move towards each other every round (WD falls, both distributions move), so most
// cases run the full 5 rounds; the judge scores everyone alike, so CRIT never falls.
const turn = (seat: 'A' | 'B', r: number) => {
  const x = seat === 'A' ? 0.9 - 0.1 * r : 0.1 + 0.05 * r
  return {
    match: { model: seat === 'A' ? 'gen-a' : 'gen-b', contains: `Round ${r}. Information set S` },
    replies: [
      {
        json: {
          predictions: [
            { label: 'Influenza', probability: round(x, 4), justification: 'fever and myalgia' },
            { label: 'Dengue Fever', probability: round(1 - x, 4), justification: 'rash' },
          ],
          arguments: [`${seat} round ${r}`],
          counterArguments: [],
        },
      },
    ],
  }
}
const fake = await fakeLlmChild({
  latencyMs: LATENCY,
  script: [
    ...[1, 2, 3, 4, 5].flatMap((r) => [turn('A', r), turn('B', r)]),
    {
      match: { model: 'judge', contains: 'with CRIT' },
      replies: [{ json: { reasons: [{ reason: 'fits', validity: 7, credibility: 7 }], rivals: [], comment: '' } }],
    },
    {
      match: { model: 'judge', contains: 'finished diagnostic debate' },
      replies: [
        {
          json: {
            conclusion: 'Probably influenza.',
            missingInformation: ['travel history'],
            labTests: ['NS1 antigen'],
          },
        },
      ],
    },
  ],
})

const { db, sql } = await import('../lib/server/db')
const { execute } = await import('../lib/server/operation')
const { createRun } = await import('../lib/server/services/runs')
const { startWorkers } = await import('../lib/server/engine/jobs')

let summary = ''
try {
  const { actor, study, conn } = await benchWorld({
    baseURL: fake.url,
    defaultModel: 'gen-a',
    maxConcurrency: CONCURRENCY * 2,
  })
  const dataset = async (n: number) =>
    db.dataset.create({
      data: {
        studyId: study.id,
        name: `cases ${n}`,
        kind: 'cases',
        source: 'generated',
        instances: {
          create: Array.from({ length: n }, (_, i) => ({
            index: i,
            input: { symptoms: `fever, myalgia, rash, case ${i}` },
            prediction: i % 3 ? 'Influenza' : 'Dengue Fever',
            explanation: '',
          })),
        },
      },
    })
  const run = async (name: string, datasetId: string) => {
    const created = await execute(createRun, actor, {
      protocol: 'evince',
      studyId: study.id,
      name,
      A: { kind: 'llm', connectionId: conn.id, model: 'gen-a' },
      B: { kind: 'llm', connectionId: conn.id, model: 'gen-b' },
      judge: { connectionId: conn.id, model: 'judge' },
      config: { k: 5, maxRounds: 5 },
      datasetId,
      start: true,
    })
    if (!created.ok) throw new Error(created.error)
    return created.data.id
  }
  const waitDone = async (id: string) => {
    for (;;) {
      // Plain statements every 25 ms: the harness should not compete with the runner for CPU.
      const { rows } = await sql().query<{ open: string; stalled: string | null }>(
        `SELECT count(*) FILTER (WHERE status <> 'done') AS open, max("stallError") FILTER (WHERE status = 'stalled') AS stalled
         FROM "ProtocolSession" WHERE "runId" = $1`,
        [id],
      )
      if (rows[0]?.stalled) throw new Error(`a debate stalled: ${rows[0].stalled}`)
      if (Number(rows[0]?.open) === 0) return
      await new Promise((r) => setTimeout(r, 25))
    }
  }

  const workers = await startWorkers(CONCURRENCY)
  // Warm-up: JIT, pools, the queue schema.
  await waitDone(await run('warm-up', (await dataset(16)).id))
  const ds = await dataset(CASES)
  const t0 = performance.now()
  const runId = await run('bench', ds.id)
  await waitDone(runId)
  const wall = performance.now() - t0
  await workers.stop()

  const chains = await db.$queryRaw<Array<{ ms: number; calls: bigint }>>`
    SELECT sum(c."latencyMs")::float AS ms, count(*) AS calls FROM "LlmCall" c
    JOIN "ProtocolSession" s ON s.id = c."sessionRef" WHERE s."runId" = ${runId}
    GROUP BY s.id`
  const rounds = await db.$queryRaw<Array<{ rounds: number }>>`
    SELECT avg(n)::float AS rounds FROM (
      SELECT count(*) FILTER (WHERE m.label = 'turn') / 2.0 AS n FROM "ProtocolMessage" m
      JOIN "ProtocolSession" s ON s.id = m."sessionId" WHERE s."runId" = ${runId} GROUP BY s.id) x`
  const sequential = chains.reduce((a, c) => a + c.ms, 0)
  const longest = Math.max(...chains.map((c) => c.ms))
  const ideal = Math.max(sequential / CONCURRENCY, longest)
  const result = {
    cases: CASES,
    mean_rounds: round(rounds[0]?.rounds ?? 0),
    llm_calls: chains.reduce((a, c) => a + Number(c.calls), 0),
    latency_ms: LATENCY,
    concurrency: CONCURRENCY,
    wall_ms: round(wall, 0),
    ideal_ms: round(ideal, 0),
    ratio: round(wall / ideal),
    metric_pairs: PAIRS,
    metric_ms: round(metricMs, 0),
    load_avg_1m: round(os.loadavg()[0] ?? 0),
  }
  console.log(
    `EVINCE: ${CASES} cases (${result.mean_rounds} rounds on average, ${result.llm_calls} calls) in ${result.wall_ms} ms ` +
      `(ideal ${result.ideal_ms} ms, ratio ${result.ratio}); metrics for ${PAIRS} pairs in ${result.metric_ms} ms`,
  )
  summary = JSON.stringify(result)
} finally {
  fake.stop()
  await database.drop() // releases the queue, the pools and the heartbeat first
}
if (summary) console.log(summary)
else process.exitCode = 1
