/**
 * `npm run bench:rehac`: ReHAC's pure data path on the authors' released training file.
 *
 *   - Advantages of ../shared/datasets/rehac/strategyqa.jsonl (2,420 trajectories, 8,641 decisions):
 *     the Monte-Carlo table, the advantage rows and the imitation rows at λ, median of several runs
 *     after a warm-up, the file already read and parsed. Target < 300 ms.
 *
 * Without ../shared (or PARLEY_SHARED_DIR) it prints why it skipped and exits 0. Last line: JSON.
 *
 *   npx tsx scripts/bench-rehac.ts [--runs 15] [--lambda 0.08]
 */
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { advantageTables } from '../protocols/rehac/core/advantages'
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
    load_avg_1m: round(os.loadavg()[0] ?? 0),
  }
  console.log(
    `ReHAC: advantages of ${lines.length} trajectories (${tables.decisions} decisions → ${tables.advantages.length} rows) ` +
      `in ${result.advantages_median_ms} ms (median of ${RUNS}; target < 300 ms)`,
  )
  console.log(JSON.stringify(result))
}
