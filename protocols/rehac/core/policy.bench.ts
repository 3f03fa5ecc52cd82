/**
 * Time and memory of training the collaboration policy (run: `npx tsx protocols/rehac/core/policy.bench.ts`
 * [path to strategyqa.jsonl]). `measureTraining` is exported for the lead's bench script, which can pass
 * the rows of the real advantages.ts; `strategyqaAdvantageRows` below is only a small stand-in so this
 * script and policy.test.ts can run on the released StrategyQA file before that module lands.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { type AdvantageRow, evaluate, splitByKey, type TrainOptions, trainPolicy } from './policy'

export interface TrainingMeasure {
  rows: number
  ms: number
  /** Peak heapUsed / rss sampled after every mini-batch and at the end (bytes). */
  peakHeapUsed: number
  peakRss: number
  baselineHeapUsed: number
  baselineRss: number
  samples: number
  finalLoss: number
}

export function measureTraining(rows: readonly AdvantageRow[], options: TrainOptions = {}): TrainingMeasure {
  const before = process.memoryUsage()
  let peakHeapUsed = before.heapUsed
  let peakRss = before.rss
  let samples = 0
  const sample = () => {
    const m = process.memoryUsage()
    samples++
    if (m.heapUsed > peakHeapUsed) peakHeapUsed = m.heapUsed
    if (m.rss > peakRss) peakRss = m.rss
  }
  const t0 = performance.now()
  const result = trainPolicy(rows, options, sample)
  const ms = performance.now() - t0
  sample()
  return {
    rows: rows.length,
    ms,
    peakHeapUsed,
    peakRss,
    baselineHeapUsed: before.heapUsed,
    baselineRss: before.rss,
    samples,
    finalLoss: result.history.at(-1)?.loss ?? Number.NaN,
  }
}

/**
 * Stand-in for advantages.ts (rehac.md §2.3, whole-trajectory C, λ = 0.08): every step of every
 * trajectory gives (state = text up to and including that step's "<solver>", action = its solver,
 * return = f1 − λ·human steps); rows are grouped by (question idx, state, action), states over 5041
 * characters are dropped, and only states with both actions are kept, with A = (R̂(s,a) − R̂(s,¬a)) / 2.
 * Returns the rows and each state's question idx (the key for a held-out split).
 */
export function strategyqaAdvantageRows(
  jsonl: string,
  lambda = 0.08,
): { rows: AdvantageRow[]; questionOf: Map<string, number> } {
  const groups = new Map<string, { idx: number; state: string; action: 0 | 1; sum: number; n: number }>()
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue
    const rec = JSON.parse(line) as { idx: number; trajectory: string; f1: number }
    const markers = [...rec.trajectory.matchAll(/<solver> (agent|human)/g)]
    const humans = markers.filter((m) => m[1] === 'human').length
    const ret = Number(rec.f1) - lambda * humans
    for (const m of markers) {
      const state = rec.trajectory.slice(0, m.index + '<solver>'.length)
      if (state.length > 5041) continue
      const action: 0 | 1 = m[1] === 'human' ? 1 : 0
      const key = `${rec.idx}\u0000${action}\u0000${state}`
      const g = groups.get(key)
      if (g) {
        g.sum += ret
        g.n++
      } else groups.set(key, { idx: rec.idx, state, action, sum: ret, n: 1 })
    }
  }
  const rows: AdvantageRow[] = []
  const questionOf = new Map<string, number>()
  for (const g of groups.values()) {
    if (g.action !== 0) continue
    const other = groups.get(`${g.idx}\u00001\u0000${g.state}`)
    if (!other) continue
    const r0 = g.sum / g.n
    const r1 = other.sum / other.n
    rows.push({ state: g.state, action: 0, reward: (r0 - r1) / 2, count: g.n })
    rows.push({ state: g.state, action: 1, reward: (r1 - r0) / 2, count: other.n })
    questionOf.set(g.state, g.idx)
  }
  return { rows, questionOf }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href
if (isMain) {
  // Same default as tests/support/shared.ts: ../shared beside the project, or PARLEY_SHARED_DIR.
  const shared = process.env.PARLEY_SHARED_DIR ?? path.resolve(import.meta.dirname, '../../../../shared')
  const file = process.argv[2] ?? path.join(shared, 'datasets', 'rehac', 'strategyqa.jsonl')
  const { rows, questionOf } = strategyqaAdvantageRows(readFileSync(file, 'utf8'))
  const opts: TrainOptions = { epochs: 10, seed: 42 }
  const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`
  const full = measureTraining(rows, opts)
  console.log(
    `all ${full.rows} rows, 10 epochs: ${full.ms.toFixed(0)} ms; heapUsed ${mb(full.baselineHeapUsed)} → peak ${mb(full.peakHeapUsed)}; rss ${mb(full.baselineRss)} → peak ${mb(full.peakRss)} (${full.samples} samples); final loss ${full.finalLoss.toFixed(5)}`,
  )
  const split = splitByKey(rows, (r) => String(questionOf.get(r.state)), { testFraction: 0.2, seed: 7 })
  const { model } = trainPolicy(split.train, opts)
  console.log('held-out', evaluate(model, split.test))
}
