/**
 * The prompt lab's tables (reference Part B, §B.4, §B.5.2–B.5.7), pure: given a gold dataset's items,
 * the labels of several LLM-labeller runs (one per prompt variant or paraphrase) and optionally TREC
 * runs, compute the paper's Table 2 (MAE, κ, AUC, RBO of query and of system orderings, each with a
 * seeded bootstrap interval over documents and † on the significantly best per column), Table 3 (main
 * effects of each feature on κ) and split-half selection stability.
 *
 * Unparseable labels are dropped from every statistic and counted per variant. The bootstrap draws the
 * dataset's documents (all gold items) with one seed, so resample b of every variant is over the same
 * documents (the paired t-test of {@link markBest} relies on that); a variant's statistic on a resample
 * uses the drawn documents it labelled. For the RBO columns a resample's qrels are the drawn documents
 * (a document drawn twice counts once; one not drawn is unjudged, so not relevant), under gold and
 * under the variant's labels; the per-query metric (RBP@100, φ 0.6) of the chosen run orders the
 * queries ascending, the runs' mean metric orders the systems descending; RBO is the truncated one.
 */
import {
  type BestMark,
  binarise,
  type Id,
  kappaOfConfusion,
  kappaStatistic,
  mainEffects,
  type MainEffect,
  markBest,
  mulberry32,
  orderByScore,
  pairwiseAccuracy,
  quantileSorted,
  rbo,
  type Run,
  type SplitHalfStability,
  splitHalfStability,
} from '../../../lib/metrics/agreement'
import { BASELINE_VARIANT, FEATURES, parsePromptName, parseVariant } from './variants'

export interface LabItem {
  /** The dataset item's id. */
  id: string
  /** The TREC topic (query) id; AUC within topics and the ranking analyses group by it. */
  topic: string
  /** The TREC document id (for the ranking analyses); defaults to the item id. */
  docid?: string
  /** The gold label (0, 1, 2 …). */
  gold: number
}

export interface LabVariant {
  /** The prompt's name: a variant code (`-DNA-`) or a paraphrase (`-DNA-/p1`). */
  name: string
  /** Item id → the label, or null when the reply was unparseable. Items absent were not labelled. */
  labels: ReadonlyMap<string, number | null>
}

export interface LabOptions {
  /** Bootstrap resamples over documents (the paper: 20). */
  resamples?: number
  seed?: number
  level?: number
  /** AUC pairs within topics only (default: across topics, the paper's). */
  aucWithinTopics?: boolean
  /** TREC runs by tag: per topic, the ranked document ids. Without them the RBO columns are null. */
  runs?: Readonly<Record<string, Run>>
  /** The run whose per-query metric orders the queries (default: the first tag in sort order). */
  queryRun?: string
  /** φ of the per-query RBP@100 (0.6), of the query-ordering RBO (0.9), of the system-ordering RBO (0.7). */
  rbpPhi?: number
  queryRboPhi?: number
  systemRboPhi?: number
  /** Split-half iterations (1,000); 0 skips it. */
  splitHalfIterations?: number
}

export interface Cell {
  estimate: number | null
  lo: number | null
  hi: number | null
  /** The statistic on each resample (NaN where undefined). */
  samples: number[]
}

export type Column = 'mae' | 'kappa' | 'auc' | 'rboQuery' | 'rboSystem'
export const COLUMNS: readonly Column[] = ['mae', 'kappa', 'auc', 'rboQuery', 'rboSystem']
const HIGHER_IS_BETTER: Record<Column, boolean> = {
  mae: false,
  kappa: true,
  auc: true,
  rboQuery: true,
  rboSystem: true,
}

export interface LabRow {
  name: string
  /** Items labelled with a parseable label. */
  n: number
  unparseable: number
  mae: Cell
  kappa: Cell
  auc: Cell
  rboQuery: Cell | null
  rboSystem: Cell | null
}

export interface LabTable {
  rows: LabRow[]
  /** Per column: the best variant, the next best and the one-sided t-test (null with < 2 variants or < 2 resamples). */
  best: Record<Column, BestMark | null>
  /** Why the RBO columns are empty, when they are. */
  rboNote: string | null
  queryRun: string | null
  resamples: number
  level: number
  seed: number
  /** Main effects of each feature on κ over the variants present (paraphrases left out). */
  mainEffects: Record<string, MainEffect>
  /** Variant codes present of the 32; the factorial is complete only with all 32. */
  factorialComplete: boolean
  variantsPresent: number
  /** Split-half selection stability on κ (null when the baseline `-----` is absent or skipped). */
  splitHalf: SplitHalfStability | null
  splitHalfNote: string | null
}

function interval(estimate: number | null, samples: number[], level: number): Cell {
  const defined = Float64Array.from(samples.filter((v) => !Number.isNaN(v))).sort()
  const a = (1 - level) / 2
  return {
    estimate,
    lo: defined.length ? quantileSorted(defined, a) : null,
    hi: defined.length ? quantileSorted(defined, 1 - a) : null,
    samples,
  }
}

/** κ and binary MAE of the labelled drawn items (label[i] = −1 when not labelled or unparseable). */
function kappaAndMae(label: Int8Array, gold: Int8Array, idx: Uint32Array): [number | null, number | null] {
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  for (let p = 0; p < idx.length; p++) {
    const i = idx[p]!
    const m = label[i]!
    if (m < 0) continue
    const g = gold[i]!
    if (m === 0) g === 0 ? a++ : b++
    else g === 0 ? c++ : d++
  }
  const n = a + b + c + d
  return [
    kappaOfConfusion({ model0_gold0: a, model0_gold1: b, model1_gold0: c, model1_gold1: d }),
    n ? (b + c) / n : null,
  ]
}

function auc(
  items: readonly LabItem[],
  labels: readonly (number | null)[],
  idx: Uint32Array,
  within: boolean,
): number | null {
  const g: number[] = []
  const s: number[] = []
  const t: string[] = []
  for (let p = 0; p < idx.length; p++) {
    const i = idx[p]!
    const l = labels[i]
    if (l === null || l === undefined) continue
    g.push(items[i]!.gold)
    s.push(l)
    t.push(items[i]!.topic)
  }
  return pairwiseAccuracy(g, s, within ? t : undefined).auc
}

/**
 * The runs as item indices: per run, per topic, the item of each of the first 100 distinct documents
 * (−1: not an item, so never relevant), with RBP's weights (1 − φ)·φ^{r−1}. A resample's per-query
 * RBP@100 is then a sum over these positions: the same figure as perQueryMetrics on the resample's qrels
 * (checked by the tests), without building them.
 */
interface RankIndex {
  tags: string[]
  topics: string[][]
  items: Int32Array[][]
  weights: Float64Array
}

function rankIndex(runs: Readonly<Record<string, Run>>, items: readonly LabItem[], rbpPhi: number): RankIndex {
  const byKey = new Map(items.map((it, i) => [`${it.topic}\u0000${it.docid ?? it.id}`, i]))
  const weights = new Float64Array(100)
  let w = 1 - rbpPhi
  for (let r = 0; r < 100; r++) {
    weights[r] = w
    w *= rbpPhi
  }
  const tags = Object.keys(runs)
  const topics: string[][] = []
  const idx: Int32Array[][] = []
  for (const tag of tags) {
    const run = runs[tag]!
    const qs = Object.keys(run)
    topics.push(qs)
    idx.push(
      qs.map((q) => {
        const seen = new Set<string>()
        const out: number[] = []
        for (const doc of run[q]!) {
          if (out.length >= 100) break
          if (seen.has(doc)) continue
          seen.add(doc)
          out.push(byKey.get(`${q}\u0000${doc}`) ?? -1)
        }
        return Int32Array.from(out)
      }),
    )
  }
  return { tags, topics, items: idx, weights }
}

/** The two orderings under the relevance of each item on this resample (1: drawn and relevant). */
function orderings(index: RankIndex, queryRun: string, relevant: Uint8Array): { queries: Id[]; systems: Id[] } {
  const means: Record<string, number> = {}
  let queries: Id[] = []
  index.tags.forEach((tag, t) => {
    const per: Record<string, number> = {}
    let sum = 0
    index.items[t]!.forEach((ranked, qi) => {
      let rbp = 0
      for (let r = 0; r < ranked.length; r++) {
        const i = ranked[r]!
        if (i >= 0 && relevant[i]) rbp += index.weights[r]!
      }
      per[index.topics[t]![qi]!] = rbp
      sum += rbp
    })
    const nq = index.topics[t]!.length
    means[tag] = nq ? sum / nq : 0
    if (tag === queryRun) queries = orderByScore(per, 'asc')
  })
  return { queries, systems: orderByScore(means, 'desc') }
}

/** 1 for the drawn items whose label (null: none) is relevant (≥ 1). */
function relevantOf(_n: number, labelOf: (i: number) => number | null, idx: Uint32Array, into: Uint8Array): Uint8Array {
  into.fill(0)
  for (let p = 0; p < idx.length; p++) {
    const i = idx[p]!
    const l = labelOf(i)
    if (l !== null && l >= 1) into[i] = 1
  }
  return into
}

function rboOf(a: readonly Id[], b: readonly Id[], phi: number): number | null {
  const k = Math.min(a.length, b.length)
  if (k < 1) return null
  return rbo(a, b, phi, k).trunc
}

/** Table 2, Table 3 and split-half stability of the given variants over the given gold items. */
export function promptLabTable(
  items: readonly LabItem[],
  variants: readonly LabVariant[],
  options: LabOptions = {},
): LabTable {
  const resamples = options.resamples ?? 20
  const level = options.level ?? 0.95
  const seed = options.seed ?? 1
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError('prompt lab: resamples must be a whole number ≥ 1')
  const n = items.length
  const within = options.aucWithinTopics ?? false
  const runs = options.runs && Object.keys(options.runs).length ? options.runs : null
  const queryRun = runs ? (options.queryRun ?? Object.keys(runs).sort()[0]!) : null
  if (runs && queryRun && !runs[queryRun]) throw new RangeError(`prompt lab: no run "${queryRun}"`)
  const rbpPhi = options.rbpPhi ?? 0.6
  const qPhi = options.queryRboPhi ?? 0.9
  const sPhi = options.systemRboPhi ?? 0.7

  const gold = new Int8Array(n)
  for (let i = 0; i < n; i++) gold[i] = binarise(items[i]!.gold)
  const index = new Map(items.map((it, i) => [it.id, i]))
  const perVariant = variants.map((v) => {
    const labels: (number | null)[] = new Array(n).fill(null)
    const bin = new Int8Array(n).fill(-1)
    let labelled = 0
    let unparseable = 0
    for (const [id, l] of v.labels) {
      const i = index.get(id)
      if (i === undefined) continue
      if (l === null) {
        unparseable++
        continue
      }
      labels[i] = l
      bin[i] = binarise(l)
      labelled++
    }
    return { name: v.name, labels, bin, labelled, unparseable }
  })

  // The draws: resample 0 is the identity (the estimate); 1..B are drawn with one seed for all variants.
  const rng = mulberry32(seed)
  const draws: Uint32Array[] = []
  const identity = new Uint32Array(n)
  for (let i = 0; i < n; i++) identity[i] = i
  draws.push(identity)
  for (let b = 0; b < resamples; b++) {
    const d = new Uint32Array(n)
    for (let i = 0; i < n; i++) d[i] = Math.floor(rng() * n)
    draws.push(d)
  }
  // Under gold, the orderings of each resample are the same for every variant: compute them once.
  const ranks = runs ? rankIndex(runs, items, rbpPhi) : null
  const scratch = new Uint8Array(n)
  const goldOrders = ranks
    ? draws.map((idx) =>
        orderings(
          ranks,
          queryRun!,
          relevantOf(n, (i) => items[i]!.gold, idx, scratch),
        ),
      )
    : null

  const rows: LabRow[] = perVariant.map((v) => {
    const values: Record<Column, number[]> = { mae: [], kappa: [], auc: [], rboQuery: [], rboSystem: [] }
    draws.forEach((idx, b) => {
      const [k, m] = kappaAndMae(v.bin, gold, idx)
      values.kappa.push(k ?? Number.NaN)
      values.mae.push(m ?? Number.NaN)
      values.auc.push(auc(items, v.labels, idx, within) ?? Number.NaN)
      if (ranks && goldOrders) {
        const o = orderings(
          ranks,
          queryRun!,
          relevantOf(n, (i) => v.labels[i] ?? null, idx, scratch),
        )
        values.rboQuery.push(rboOf(goldOrders[b]!.queries, o.queries, qPhi) ?? Number.NaN)
        values.rboSystem.push(rboOf(goldOrders[b]!.systems, o.systems, sPhi) ?? Number.NaN)
      }
    })
    const cell = (c: Column): Cell => {
      const [est, ...rest] = values[c]
      return interval(Number.isNaN(est!) ? null : est!, rest, level)
    }
    return {
      name: v.name,
      n: v.labelled,
      unparseable: v.unparseable,
      mae: cell('mae'),
      kappa: cell('kappa'),
      auc: cell('auc'),
      rboQuery: runs ? cell('rboQuery') : null,
      rboSystem: runs ? cell('rboSystem') : null,
    }
  })

  const best = {} as Record<Column, BestMark | null>
  for (const c of COLUMNS) {
    const candidates = rows
      .map((r) => ({ id: r.name, cell: r[c] }))
      .filter((x): x is { id: string; cell: Cell } => x.cell?.samples.every((s) => !Number.isNaN(s)) === true)
      .map((x) => ({ id: x.id, samples: x.cell.samples }))
    best[c] =
      candidates.length >= 2 && resamples >= 2 ? markBest(candidates, { higherIsBetter: HIGHER_IS_BETTER[c] }) : null
  }

  // Table 3 over the plain variants (not paraphrases) whose κ is defined.
  const plain = rows.filter((r) => parsePromptName(r.name).paraphrase === undefined && r.kappa.estimate !== null)
  const effects = mainEffects(
    plain.map((r) => {
      const v = parseVariant(r.name)
      return { features: Object.fromEntries(FEATURES.map((f) => [f, v[f]])), value: r.kappa.estimate! }
    }),
  )
  const codes = new Set(plain.map((r) => r.name))

  let splitHalf: SplitHalfStability | null = null
  let splitHalfNote: string | null = null
  const iterations = options.splitHalfIterations ?? 1000
  if (iterations <= 0) splitHalfNote = 'skipped'
  else if (!perVariant.some((v) => v.name === BASELINE_VARIANT))
    splitHalfNote = `the baseline ${BASELINE_VARIANT} has no run over this dataset`
  else {
    // Items every variant labelled (a parseable label), so each half compares the variants on the same items.
    const common: number[] = []
    for (let i = 0; i < n; i++) if (perVariant.every((v) => v.bin[i]! >= 0)) common.push(i)
    if (common.length < 2) splitHalfNote = 'fewer than 2 items labelled by every variant'
    else {
      splitHalf = splitHalfStability({
        variants: Object.fromEntries(perVariant.map((v) => [v.name, common.map((i) => v.bin[i]!)])),
        gold: common.map((i) => gold[i]!),
        baseline: BASELINE_VARIANT,
        statistic: kappaStatistic,
        iterations,
        seed,
      })
      if (common.length < n) splitHalfNote = `over the ${common.length} of ${n} items every variant labelled`
    }
  }

  return {
    rows,
    best,
    rboNote: runs
      ? null
      : 'no TREC run file is stored with this dataset: the RBO columns need one (import a trec-runs file)',
    queryRun,
    resamples,
    level,
    seed,
    mainEffects: effects,
    factorialComplete: codes.size === 32,
    variantsPresent: codes.size,
    splitHalf,
    splitHalfNote,
  }
}
