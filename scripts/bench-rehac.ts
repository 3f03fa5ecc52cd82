/**
 * `npm run bench:rehac`: ReHAC's episodes on the job queue against the fake LLM, then its pure data path
 * on the authors' released training file.
 *
 *   - Episodes (issue 24): 200 QA episodes (the demo questions and corpus) with the agent and the
 *     simulated human on the fake LLM at 100 ms latency, the random decider (p = 0.5, so both act), 16
 *     concurrent steps in one worker: wall time vs the ideal, the lower bound max(total LLM time / 16,
 *     the longest episode's chain of calls), as bench:pxp measures it. Target ratio ≤ 1.25. Runner
 *     overhead per step: a step's time minus its LLM time, over every appended step (the decisions and
 *     observations are program steps: their whole time is runner plus program). Target p50 < 5 ms.
 *     Uses a throwaway database on the server in DATABASE_URL, or the embedded PostgreSQL.
 *   - Advantages of ../shared/datasets/rehac/strategyqa.jsonl (2,420 trajectories, 8,641 decisions):
 *     the Monte-Carlo table, the advantage rows and the imitation rows at λ, median of several runs
 *     after a warm-up, the file already read and parsed. Target < 300 ms.
 *   - Training the collaboration policy on those advantage rows (protocols/rehac/core/policy.ts, 10
 *     epochs, seed 42): its time and peak memory (heapUsed and RSS, sampled after every mini-batch).
 *
 * Without ../shared (or PARLEY_SHARED_DIR) the released-data part prints why it skipped; the episodes
 * part still runs. Last line: one JSON object with every figure.
 *
 *   npx tsx scripts/bench-rehac.ts [--episodes 200] [--latency 100] [--concurrency 16] [--runs 15] [--lambda 0.08]
 */
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { advantageTables } from '../protocols/rehac/core/advantages'
import { type AdvantageRow, trainPolicy } from '../protocols/rehac/core/policy'
import { parseJsonl } from '../protocols/rehac/core/trajectory'
import { benchArgs } from './bench-args'
import { benchWorld, fakeLlmChild, quantile, round, throwawayDatabase, waitRunDone } from './bench-support'

const values = benchArgs(
  `Usage: npm run bench:rehac -- [options]

ReHAC episodes on the job queue against the fake LLM (a throwaway database on the server in
DATABASE_URL, or the embedded PostgreSQL), then the advantages of the released strategyqa.jsonl
(../shared/datasets/rehac, or PARLEY_SHARED_DIR; skipped with a line when absent). Last line: JSON.

  --episodes N      episodes (default 200; 0 skips the part)
  --latency MS      model latency (default 100)
  --concurrency N   steps at once, and the connection's calls at once (default 16)
  --runs N          timed advantage runs, the median is reported (default 15)
  --lambda L        the human-step penalty λ (default 0.08)
  -h, --help        this text`,
  {
    episodes: { type: 'string', default: '200' },
    latency: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
    runs: { type: 'string', default: '15' },
    lambda: { type: 'string', default: '0.08' },
  },
)
const EPISODES = Number(values.episodes)
const LATENCY = Number(values.latency)
const CONCURRENCY = Number(values.concurrency)
const RUNS = Number(values.runs)
const LAMBDA = Number(values.lambda)

// The same place tests/support/shared.ts reads (not imported: it pulls in vitest).
const SHARED = process.env.PARLEY_SHARED_DIR
  ? path.resolve(process.env.PARLEY_SHARED_DIR)
  : path.resolve(import.meta.dirname, '../../shared')
const FILE = path.join(SHARED, 'datasets', 'rehac', 'strategyqa.jsonl')

const mb = (bytes: number) => round(bytes / 1048576, 1)

/** Trains once and samples the process's memory after every mini-batch: time, peak heapUsed and RSS. */
function measureTraining(rows: readonly AdvantageRow[]) {
  const before = process.memoryUsage()
  let peakHeap = before.heapUsed
  let peakRss = before.rss
  const sample = () => {
    const m = process.memoryUsage()
    peakHeap = Math.max(peakHeap, m.heapUsed)
    peakRss = Math.max(peakRss, m.rss)
  }
  const t = performance.now()
  const { history } = trainPolicy(rows, { epochs: 10, seed: 42 }, sample)
  const ms = performance.now() - t
  sample()
  return {
    ms,
    heapBefore: before.heapUsed,
    peakHeap,
    rssBefore: before.rss,
    peakRss,
    finalLoss: history.at(-1)?.loss ?? Number.NaN,
  }
}

/** The released-data part: advantages and training on strategyqa.jsonl (null when the file is absent). */
function releasedData() {
  if (!existsSync(FILE)) {
    console.log(`skipped: the released-data part of bench:rehac needs ${FILE}`)
    return null
  }
  const lines = parseJsonl(readFileSync(FILE, 'utf8'))
  // Warm-up: JIT and the regexes.
  for (let i = 0; i < 3; i++) advantageTables(lines, { lambda: LAMBDA })
  const times: number[] = []
  let tables = advantageTables(lines, { lambda: LAMBDA })
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    tables = advantageTables(lines, { lambda: LAMBDA })
    times.push(performance.now() - t)
  }
  const trained = measureTraining(tables.advantages)
  const result = {
    trajectories: lines.length,
    decisions: tables.decisions,
    states: tables.states,
    monte_carlo_rows: tables.monteCarlo.length,
    advantage_rows: tables.advantages.length,
    imitation_rows: tables.imitation.length,
    lambda: LAMBDA,
    runs: RUNS,
    advantages_median_ms: round(quantile(times, 0.5)),
    advantages_min_ms: round(Math.min(...times)),
    advantages_max_ms: round(Math.max(...times)),
    target_ms: 300,
    training_rows: tables.advantages.length,
    training_ms: round(trained.ms),
    training_heap_before_mb: mb(trained.heapBefore),
    training_heap_peak_mb: mb(trained.peakHeap),
    training_rss_before_mb: mb(trained.rssBefore),
    training_rss_peak_mb: mb(trained.peakRss),
  }
  console.log(
    `ReHAC: advantages of ${lines.length} trajectories (${tables.decisions} decisions → ${tables.advantages.length} rows) ` +
      `in ${result.advantages_median_ms} ms (median of ${RUNS}; target < 300 ms); policy training on them ` +
      `(10 epochs) ${result.training_ms} ms, heap peak ${result.training_heap_peak_mb} MB, RSS peak ${result.training_rss_peak_mb} MB`,
  )
  return result
}

/**
 * The episodes part: EPISODES episodes of the demo QA task set, the random decider, the agent and the
 * simulated human on the fake LLM (every episode searches, then finishes: two model calls).
 */
async function episodesPart() {
  const database = await throwawayDatabase()
  const { rehacScript } = await import('../protocols/rehac/fixture')
  const fake = await fakeLlmChild({ latencyMs: LATENCY, script: rehacScript(LATENCY) })
  try {
    const { db } = await import('../lib/server/db')
    const { execute } = await import('../lib/server/operation')
    const { createRun, startRun } = await import('../lib/server/services/runs')
    const { startWorkers } = await import('../lib/server/engine/jobs')
    const { observeSteps } = await import('../lib/server/engine/runner')
    const { rehacQaDataset } = await import('../protocols/rehac/fixture')
    // In-process: the workers bound the concurrency, not the connection.
    const { actor, study, conn } = await benchWorld({
      baseURL: fake.url,
      defaultModel: 'gen',
      maxConcurrency: CONCURRENCY * 2,
    })
    const model = { kind: 'llm', model: { connectionId: conn.id, model: 'gen' } }
    const run = async (name: string, n: number) => {
      const created = await execute(createRun, actor, {
        protocol: 'rehac',
        studyId: study.id,
        name,
        datasetId: await rehacQaDataset(study.id, n),
        seats: { decider: { kind: 'program', program: 'random', params: { seed: 1 } }, agent: model, human: model },
      })
      if (!created.ok) throw new Error(`${created.error} ${JSON.stringify(created.fieldErrors ?? {})}`)
      return created.data.id
    }
    // Warm-up: JIT, pools, the queue schema, the corpus cache.
    const workers = await startWorkers(CONCURRENCY)
    const warm = await run('warm-up', 4)
    await execute(startRun, actor, { runId: warm })
    await waitRunDone(warm)

    const steps: Array<{ kind: string; totalMs: number; llmMs: number }> = []
    observeSteps((t) => steps.push(t))
    const runId = await run('bench', EPISODES)
    const t0 = performance.now()
    await execute(startRun, actor, { runId })
    await waitRunDone(runId)
    const wall = performance.now() - t0
    observeSteps(undefined)
    await workers.stop()

    const chains = await db.$queryRaw<Array<{ ms: number; calls: bigint }>>`
      SELECT sum(c."latencyMs")::float AS ms, count(*) AS calls FROM "LlmCall" c
      JOIN "ProtocolSession" s ON s.id = c."sessionRef" WHERE s."runId" = ${runId}
      GROUP BY s.id`
    const sessions = await db.protocolSession.groupBy({ by: ['status'], where: { runId }, _count: true })
    const messages = await db.protocolMessage.count({ where: { session: { runId } } })
    const human = await db.protocolMessage.count({ where: { session: { runId }, sender: 'human' } })
    const sequential = chains.reduce((a, c) => a + c.ms, 0)
    const longest = Math.max(...chains.map((c) => c.ms))
    const ideal = Math.max(sequential / CONCURRENCY, longest)
    const appended = steps.filter((s) => s.kind === 'appended')
    const overhead = appended.map((s) => s.totalMs - s.llmMs)
    const llmSteps = appended.filter((s) => s.llmMs > 0).map((s) => s.totalMs - s.llmMs)
    const result = {
      episodes: EPISODES,
      episodes_done: sessions.find((s) => s.status === 'done')?._count ?? 0,
      messages,
      human_steps: human,
      llm_calls: chains.reduce((a, c) => a + Number(c.calls), 0),
      latency_ms: LATENCY,
      concurrency: CONCURRENCY,
      wall_ms: round(wall, 0),
      ideal_ms: round(ideal, 0),
      ratio: round(wall / ideal),
      ratio_target: 1.25,
      sequential_ms: round(sequential, 0),
      overhead_p50_ms: overhead.length ? round(quantile(overhead, 0.5)) : null,
      overhead_p95_ms: overhead.length ? round(quantile(overhead, 0.95)) : null,
      overhead_llm_steps_p50_ms: llmSteps.length ? round(quantile(llmSteps, 0.5)) : null,
      overhead_target_ms: 5,
    }
    console.log(
      `ReHAC: ${EPISODES} episodes, ${messages} messages (${human} human steps) in ${result.wall_ms} ms ` +
        `(ideal ${result.ideal_ms} ms, ratio ${result.ratio}; target ≤ 1.25); runner overhead per step p50 ` +
        `${result.overhead_p50_ms} ms (target < 5 ms), p95 ${result.overhead_p95_ms} ms`,
    )
    return result
  } finally {
    fake.stop()
    await database.drop() // releases the queue, the pools and the heartbeat first
  }
}

const episodes = EPISODES > 0 ? await episodesPart() : null
const released = releasedData()
// The JSON line last, after the clean-up (whose messages would otherwise follow it).
console.log(
  JSON.stringify({
    episodes: episodes ?? { skipped: true },
    released: released ?? { skipped: true, reason: `missing ${FILE}` },
    load_avg_1m: round(os.loadavg()[0] ?? 0),
  }),
)
