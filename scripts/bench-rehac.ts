/**
 * `npm run bench:rehac`: ReHAC's pure data path on the authors' released training file.
 *
 *   - Advantages of ../shared/datasets/rehac/strategyqa.jsonl (2,420 trajectories, 8,641 decisions):
 *     the Monte-Carlo table, the advantage rows and the imitation rows at λ, median of several runs
 *     after a warm-up, the file already read and parsed. Target < 300 ms.
 *   - Training the collaboration policy on those advantage rows (protocols/rehac/core/policy.ts, 10
 *     epochs, seed 42): its time and peak memory (heapUsed and RSS, sampled after every mini-batch).
 *
 * Without ../shared (or PARLEY_SHARED_DIR) it prints why it skipped and exits 0. Last line: JSON.
 *
 *   npx tsx scripts/bench-rehac.ts [--runs 15] [--lambda 0.08]
 */
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { advantageTables } from '../protocols/rehac/core/advantages'
import { type AdvantageRow, trainPolicy } from '../protocols/rehac/core/policy'
import { parseJsonl } from '../protocols/rehac/core/trajectory'
import { benchArgs } from './bench-args'

const values = benchArgs(
  `Usage: npm run bench:rehac -- [options]

ReHAC advantages of the released strategyqa.jsonl (../shared/datasets/rehac, or PARLEY_SHARED_DIR).
Last line: JSON.

  --runs N       timed runs, the median is reported (default 15)
  --lambda L     the human-step penalty λ (default 0.08)
  -h, --help     this text`,
  {
    runs: { type: 'string', default: '15' },
    lambda: { type: 'string', default: '0.08' },
  },
)
const RUNS = Number(values.runs)
const LAMBDA = Number(values.lambda)

// The same place tests/support/shared.ts reads (not imported: it pulls in vitest).
const SHARED = process.env.PARLEY_SHARED_DIR
  ? path.resolve(process.env.PARLEY_SHARED_DIR)
  : path.resolve(import.meta.dirname, '../../shared')
const FILE = path.join(SHARED, 'datasets', 'rehac', 'strategyqa.jsonl')

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits
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

if (!existsSync(FILE)) {
  console.log(`skipped: bench:rehac needs ${FILE} (released data)`)
  console.log(JSON.stringify({ skipped: true, reason: `missing ${FILE}` }))
} else {
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
  times.sort((a, b) => a - b)
  const median =
    times.length % 2
      ? (times[(times.length - 1) / 2] as number)
      : ((times[times.length / 2 - 1] as number) + (times[times.length / 2] as number)) / 2
  const result = {
    trajectories: lines.length,
    decisions: tables.decisions,
    states: tables.states,
    monte_carlo_rows: tables.monteCarlo.length,
    advantage_rows: tables.advantages.length,
    imitation_rows: tables.imitation.length,
    lambda: LAMBDA,
    runs: RUNS,
    advantages_median_ms: round(median),
    advantages_min_ms: round(times[0] as number),
    advantages_max_ms: round(times[times.length - 1] as number),
    target_ms: 300,
    training_rows: 0,
    training_ms: 0,
    training_heap_before_mb: 0,
    training_heap_peak_mb: 0,
    training_rss_before_mb: 0,
    training_rss_peak_mb: 0,
    load_avg_1m: 0,
  }
  const trained = measureTraining(tables.advantages)
  result.training_rows = tables.advantages.length
  result.training_ms = round(trained.ms)
  result.training_heap_before_mb = mb(trained.heapBefore)
  result.training_heap_peak_mb = mb(trained.peakHeap)
  result.training_rss_before_mb = mb(trained.rssBefore)
  result.training_rss_peak_mb = mb(trained.peakRss)
  result.load_avg_1m = round(os.loadavg()[0] ?? 0)
  console.log(
    `ReHAC: advantages of ${lines.length} trajectories (${tables.decisions} decisions → ${tables.advantages.length} rows) ` +
      `in ${result.advantages_median_ms} ms (median of ${RUNS}; target < 300 ms); policy training on them ` +
      `(10 epochs) ${result.training_ms} ms, heap peak ${result.training_heap_peak_mb} MB, RSS peak ${result.training_rss_peak_mb} MB`,
  )
  console.log(JSON.stringify(result))
}
