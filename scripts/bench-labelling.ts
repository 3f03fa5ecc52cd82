/**
 * `npm run bench:labelling`: the labelling protocol's figures, in named sections (others add theirs:
 * the agreement page, 100 annotators). Pure, no database.
 *
 *   - bootstrapKappa: binarised κ with 1,000 resamples over 3,000 items (lib/metrics/agreement.ts),
 *     median of several runs after a warm-up. Target < 200 ms.
 *   - promptLabTable: the prompt lab's Table 2 (MAE, κ, AUC with 20 bootstrap resamples each, † per
 *     column), Table 3 and split-half stability (1,000 halves) for 32 variants × 3,000 items of
 *     synthetic labels (seeded), without and with 4 TREC runs of 100 documents per query (RBO columns).
 *
 * Last stdout line: one JSON object { sections: { name: figures } }.
 *
 *   npx tsx scripts/bench-labelling.ts [--items 3000] [--runs 5] [--only name,name]
 */
import { bootstrapKappa, mulberry32 } from '../lib/metrics/agreement'
import { type LabItem, type LabVariant, promptLabTable } from '../protocols/labelling/core/prompt-lab'
import { TABLE2_ORDER } from '../protocols/labelling/core/variants'
import { benchArgs } from './bench-args'

const values = benchArgs(
  `Usage: npm run bench:labelling -- [options]

The labelling protocol's timings (pure, no database). Last line: JSON.

  --items N     items (default 3000)
  --runs N      timed runs per figure, the median is reported (default 5)
  --only LIST   comma-separated section names (default: all)
  -h, --help    this text`,
  {
    items: { type: 'string', default: '3000' },
    runs: { type: 'string', default: '5' },
    only: { type: 'string', default: '' },
  },
)
const ITEMS = Number(values.items)
const RUNS = Number(values.runs)
const ONLY = new Set(values.only ? values.only.split(',') : [])

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
const round = (x: number) => Math.round(x * 100) / 100
function timed(fn: () => unknown): number {
  fn() // warm-up
  const times: number[] = []
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now()
    fn()
    times.push(performance.now() - t0)
  }
  return round(median(times))
}

/** Seeded synthetic data: graded gold, each variant agreeing with gold with its own probability. */
function synthetic(nItems: number, nVariants: number) {
  const rng = mulberry32(42)
  const topics = 50
  const items: LabItem[] = Array.from({ length: nItems }, (_, i) => ({
    id: `i${i}`,
    topic: `q${i % topics}`,
    docid: `d${i}`,
    gold: Math.floor(rng() * 3),
  }))
  const variants: LabVariant[] = TABLE2_ORDER.slice(0, nVariants).map((name, v) => {
    const p = 0.55 + (0.4 * v) / nVariants
    const labels = new Map<string, number | null>()
    for (const it of items) {
      const r = rng()
      labels.set(it.id, r < 0.01 ? null : r < p ? it.gold : Math.floor(rng() * 3))
    }
    return { name, labels }
  })
  // 4 runs: per topic, its documents in a run-specific shuffled order (≤ 100 per topic).
  const runs: Record<string, Record<string, string[]>> = {}
  for (let r = 0; r < 4; r++) {
    const run: Record<string, string[]> = {}
    for (const it of items) {
      const list = run[it.topic] ?? []
      list.push(it.docid!)
      run[it.topic] = list
    }
    for (const q of Object.keys(run)) run[q] = run[q]!.sort(() => rng() - 0.5).slice(0, 100)
    runs[`run${r}`] = run
  }
  return { items, variants, runs }
}

const sections: Record<string, Record<string, unknown>> = {}
const want = (name: string) => ONLY.size === 0 || ONLY.has(name)

if (want('bootstrapKappa')) {
  const rng = mulberry32(1)
  const gold = Array.from({ length: ITEMS }, () => Math.floor(rng() * 3))
  const model = gold.map((g) => (rng() < 0.7 ? g : Math.floor(rng() * 3)))
  const ms = timed(() => bootstrapKappa(gold, model, { resamples: 1000, seed: 1 }))
  sections.bootstrapKappa = { items: ITEMS, resamples: 1000, ms, targetMs: 200, pass: ms < 200 }
  console.log(`bootstrapKappa: ${ITEMS} items × 1,000 resamples: ${ms} ms (target < 200)`)
}

if (want('promptLabTable')) {
  const { items, variants, runs } = synthetic(ITEMS, 32)
  const plain = timed(() => promptLabTable(items, variants, { resamples: 20, seed: 1, splitHalfIterations: 1000 }))
  const withRuns = timed(() =>
    promptLabTable(items, variants, { resamples: 20, seed: 1, splitHalfIterations: 1000, runs, queryRun: 'run0' }),
  )
  const splitOnly = timed(() => promptLabTable(items, variants, { resamples: 1, seed: 1, splitHalfIterations: 1000 }))
  sections.promptLabTable = {
    variants: 32,
    items: ITEMS,
    resamples: 20,
    splitHalfIterations: 1000,
    ms: plain,
    msWithRuns: withRuns,
    trecRuns: 4,
    msSplitHalfMostly: splitOnly,
  }
  console.log(`promptLabTable: 32 variants × ${ITEMS} items: ${plain} ms; with 4 TREC runs (RBO): ${withRuns} ms`)
}

console.log(JSON.stringify({ bench: 'labelling', sections }))
