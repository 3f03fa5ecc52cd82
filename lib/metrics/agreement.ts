/**
 * Agreement metrics for LLM relevance labelling (Thomas et al., "Large language models can
 * accurately predict searcher preferences"; ../shared/reference/mint-and-llm-labelling.md Part B,
 * §B.4 metrics and §B.5 numbers), and the usual inter-annotator statistics beside them. Pure: no
 * I/O, no randomness but the seeded PRNG given to it, no statistics library.
 *
 * Conventions, binding for every caller:
 * - A label is a number; "binarised" means label ≥ 1 → 1, else 0 (TREC merges "relevant" and
 *   "highly relevant"; §B.2).
 * - A statistic that is undefined (a zero denominator) is `null`, never NaN.
 * - Bad input (lengths that differ, an empty list where one is needed, duplicate ids in a ranking)
 *   throws a RangeError naming the problem; callers at a boundary check their input with zod first.
 */

// ---------------------------------------------------------------------------------------------
// Two raters: gold vs model
// ---------------------------------------------------------------------------------------------

/** Label ≥ 1 → 1 (relevant or highly relevant), else 0. */
export function binarise(label: number): 0 | 1 {
  return label >= 1 ? 1 : 0
}

/** The 2×2 table of binarised labels; `model1_gold0` counts items the model calls relevant and gold does not. */
export interface Confusion {
  model0_gold0: number
  model0_gold1: number
  model1_gold0: number
  model1_gold1: number
}

function sameLength(a: { length: number }, b: { length: number }, what: string): void {
  if (a.length !== b.length)
    throw new RangeError(`${what}: the two lists differ in length (${a.length} vs ${b.length})`)
}

/** The 2×2 confusion matrix of binarised labels (label ≥ 1 → 1). */
export function confusion(gold: readonly number[], model: readonly number[]): Confusion {
  sameLength(gold, model, 'confusion')
  const c: Confusion = { model0_gold0: 0, model0_gold1: 0, model1_gold0: 0, model1_gold1: 0 }
  for (let i = 0; i < gold.length; i++) {
    const g = binarise(gold[i]!)
    const m = binarise(model[i]!)
    if (m === 0) g === 0 ? c.model0_gold0++ : c.model0_gold1++
    else g === 0 ? c.model1_gold0++ : c.model1_gold1++
  }
  return c
}

/** What two raters' binarised labels say about each other (from the 2×2 table alone). */
export interface BinaryAgreement {
  n: number
  confusion: Confusion
  /** p_o = (model0_gold0 + model1_gold1) / n; null when n = 0. */
  accuracy: number | null
  /** Cohen's κ on the 2×2 table; null when p_e = 1 (both raters constant and equal) or n = 0. */
  kappa: number | null
  /** MAE of 0/1 labels = (model0_gold1 + model1_gold0) / n = 1 − accuracy; null when n = 0. */
  maeBinary: number | null
  /** P(gold agrees | model = 0) = model0_gold0 / (model0_gold0 + model0_gold1); null when the model never says 0. */
  pAgreeModel0: number | null
  /** P(gold agrees | model = 1) = model1_gold1 / (model1_gold0 + model1_gold1); null when the model never says 1. */
  pAgreeModel1: number | null
}

/**
 * Cohen's κ of a 2×2 table: κ = (p_o − p_e) / (1 − p_e), with p_o = (a + d)/n and
 * p_e = [(a + b)(a + c) + (c + d)(b + d)] / n² (a = model0_gold0, b = model0_gold1,
 * c = model1_gold0, d = model1_gold1). Computed on the counts: κ = (n(a + d) − S) / (n² − S),
 * S = n²·p_e, so p_e = 1 is detected exactly (null).
 */
export function kappaOfConfusion(c: Confusion): number | null {
  const { model0_gold0: a, model0_gold1: b, model1_gold0: cc, model1_gold1: d } = c
  const n = a + b + cc + d
  const s = (a + b) * (a + cc) + (cc + d) * (b + d)
  if (n === 0 || s === n * n) return null
  return (n * (a + d) - s) / (n * n - s)
}

/** Accuracy, κ, binary MAE and the conditional agreements of a 2×2 table (§B.4 1–3, §B.5.1). */
export function agreementOfConfusion(c: Confusion): BinaryAgreement {
  const n = c.model0_gold0 + c.model0_gold1 + c.model1_gold0 + c.model1_gold1
  const m0 = c.model0_gold0 + c.model0_gold1
  const m1 = c.model1_gold0 + c.model1_gold1
  return {
    n,
    confusion: { ...c },
    accuracy: n ? (c.model0_gold0 + c.model1_gold1) / n : null,
    kappa: kappaOfConfusion(c),
    maeBinary: n ? (c.model0_gold1 + c.model1_gold0) / n : null,
    pAgreeModel0: m0 ? c.model0_gold0 / m0 : null,
    pAgreeModel1: m1 ? c.model1_gold1 / m1 : null,
  }
}

export interface LabelAgreement extends BinaryAgreement {
  /** MAE on the raw graded labels: (1/n)·Σ |gold_i − model_i|; null when n = 0. */
  maeGraded: number | null
}

/** Everything of {@link agreementOfConfusion} from two label lists, plus the MAE of the raw (graded) labels. */
export function agreementOfLabels(gold: readonly number[], model: readonly number[]): LabelAgreement {
  const c = confusion(gold, model)
  let abs = 0
  for (let i = 0; i < gold.length; i++) abs += Math.abs(gold[i]! - model[i]!)
  return { ...agreementOfConfusion(c), maeGraded: gold.length ? abs / gold.length : null }
}

/** A nominal category (a label, a class name). */
export type Category = string | number

/**
 * Cohen's κ for nominal categories (k×k): κ = (p_o − p_e) / (1 − p_e), p_o = (1/n)·Σ_i [a_i = b_i],
 * p_e = Σ_c (n_a(c)/n)·(n_b(c)/n). Computed on counts, κ = (n·A − S) / (n² − S) with A the agreeing
 * items and S = Σ_c n_a(c)·n_b(c); null when n = 0 or p_e = 1.
 */
export function cohenKappa(a: readonly Category[], b: readonly Category[]): number | null {
  sameLength(a, b, 'cohenKappa')
  const n = a.length
  if (n === 0) return null
  const na = new Map<Category, number>()
  const nb = new Map<Category, number>()
  let agree = 0
  for (let i = 0; i < n; i++) {
    const x = a[i]!
    const y = b[i]!
    if (x === y) agree++
    na.set(x, (na.get(x) ?? 0) + 1)
    nb.set(y, (nb.get(y) ?? 0) + 1)
  }
  let s = 0
  for (const [c, k] of na) s += k * (nb.get(c) ?? 0)
  if (s === n * n) return null
  return (n * agree - s) / (n * n - s)
}

// ---------------------------------------------------------------------------------------------
// Many raters
// ---------------------------------------------------------------------------------------------

export interface FleissResult {
  fleissKappa: number | null
  /** P̄ = (1/N)·Σ_i P_i, P_i = (Σ_j n_ij² − n) / (n(n − 1)). */
  pBar: number
  /** P̄_e = Σ_j p_j², p_j = (1/(N·n))·Σ_i n_ij. */
  pExpected: number
}

/**
 * Fleiss' κ (Fleiss 1971). `counts[i][j]` = how many of the n raters put item i in category j; every
 * item has the same n ≥ 2 raters. κ = (P̄ − P̄_e) / (1 − P̄_e), null when P̄_e = 1 (one category only).
 */
export function fleissKappa(counts: readonly (readonly number[])[]): FleissResult {
  const N = counts.length
  if (N === 0) throw new RangeError('fleissKappa: no items')
  const k = counts[0]!.length
  const n = counts[0]!.reduce((s, v) => s + v, 0)
  if (n < 2) throw new RangeError('fleissKappa: each item needs at least 2 ratings')
  const totals = new Float64Array(k)
  let sumP = 0
  for (let i = 0; i < N; i++) {
    const row = counts[i]!
    if (row.length !== k) throw new RangeError(`fleissKappa: item ${i} has ${row.length} categories, item 0 has ${k}`)
    let rowSum = 0
    let sq = 0
    for (let j = 0; j < k; j++) {
      const v = row[j]!
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`fleissKappa: item ${i}: counts are whole numbers ≥ 0`)
      rowSum += v
      sq += v * v
      totals[j]! += v
    }
    if (rowSum !== n) throw new RangeError(`fleissKappa: item ${i} has ${rowSum} ratings, item 0 has ${n}`)
    sumP += (sq - n) / (n * (n - 1))
  }
  const pBar = sumP / N
  let pExpected = 0
  for (let j = 0; j < k; j++) pExpected += (totals[j]! / (N * n)) ** 2
  return { fleissKappa: pExpected >= 1 ? null : (pBar - pExpected) / (1 - pExpected), pBar, pExpected }
}

export type AlphaLevel = 'nominal' | 'ordinal' | 'interval' | 'ratio'
export const ALPHA_LEVELS: readonly AlphaLevel[] = ['nominal', 'ordinal', 'interval', 'ratio']

export interface AlphaResult {
  /** null when fewer than 2 pairable values or no disagreement is possible (D_e = 0). */
  alpha: number | null
  level: AlphaLevel
  /** n: the values in units with at least 2 values (the pairable values). */
  pairable: number
}

/**
 * Krippendorff's α (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability") for data with
 * missing values. `units[u][r]` is rater r's value for unit u, `null` when missing. Units with fewer
 * than 2 values are not pairable and are left out.
 *
 * Coincidences: o_ck = Σ_u (number of c–k pairs of values in u, ordered, from different raters) / (m_u − 1),
 * n_c = Σ_k o_ck, n = Σ_c n_c.
 * α = 1 − D_o/D_e = 1 − (n − 1)·Σ_{c,k} o_ck·δ²_ck / Σ_{c,k} n_c·n_k·δ²_ck, with the metric δ²:
 * - nominal: δ² = 0 if c = k else 1;
 * - ordinal: δ²_ck = (Σ_{g from c to k} n_g − (n_c + n_k)/2)² over the sorted values;
 * - interval: δ² = (c − k)²;
 * - ratio: δ² = ((c − k)/(c + k))² (0 when c = k = 0).
 */
export function krippendorffAlpha(units: readonly (readonly (number | null)[])[], level: AlphaLevel): AlphaResult {
  const present: number[][] = []
  const distinct = new Set<number>()
  for (const u of units) {
    const vals = u.filter((v): v is number => v !== null)
    if (vals.length < 2) continue
    for (const v of vals) {
      if (!Number.isFinite(v)) throw new RangeError('krippendorffAlpha: values are finite numbers or null')
      distinct.add(v)
    }
    present.push(vals)
  }
  const values = [...distinct].sort((x, y) => x - y)
  const V = values.length
  const index = new Map(values.map((v, i) => [v, i]))
  const o = new Float64Array(V * V)
  let pairable = 0
  const here = new Float64Array(V)
  for (const vals of present) {
    const m = vals.length
    pairable += m
    here.fill(0)
    for (const v of vals) here[index.get(v)!]! += 1
    for (let c = 0; c < V; c++) {
      const nc = here[c]!
      if (!nc) continue
      for (let k = 0; k < V; k++) {
        const nk = here[k]!
        if (!nk) continue
        o[c * V + k]! += (nc * (c === k ? nk - 1 : nk)) / (m - 1)
      }
    }
  }
  const marg = new Float64Array(V)
  for (let c = 0; c < V; c++) for (let k = 0; k < V; k++) marg[c]! += o[c * V + k]!
  const cum = new Float64Array(V + 1) // cum[i] = Σ_{g < i} n_g (ordinal metric)
  for (let c = 0; c < V; c++) cum[c + 1] = cum[c]! + marg[c]!
  const delta2 = (c: number, k: number): number => {
    if (c === k) return 0
    const vc = values[c]!
    const vk = values[k]!
    switch (level) {
      case 'nominal':
        return 1
      case 'ordinal': {
        const lo = Math.min(c, k)
        const hi = Math.max(c, k)
        return (cum[hi + 1]! - cum[lo]! - (marg[c]! + marg[k]!) / 2) ** 2
      }
      case 'interval':
        return (vc - vk) ** 2
      case 'ratio':
        return vc + vk === 0 ? 0 : ((vc - vk) / (vc + vk)) ** 2
    }
  }
  let observed = 0
  let expected = 0
  for (let c = 0; c < V; c++)
    for (let k = 0; k < V; k++) {
      if (c === k) continue
      const d = delta2(c, k)
      observed += o[c * V + k]! * d
      expected += marg[c]! * marg[k]! * d
    }
  const alpha = pairable < 2 || expected === 0 ? null : 1 - ((pairable - 1) * observed) / expected
  return { alpha, level, pairable }
}

/** Items × raters; `null` where a rater did not label the item. */
export type RatingTable = readonly (readonly (Category | null)[])[]

export interface PairwiseKappa {
  /** kappa[r][s]: Cohen's κ of raters r and s over the items both labelled (null when undefined). */
  kappa: (number | null)[][]
  /** n[r][s]: how many items both labelled. */
  n: number[][]
}

/** Cohen's κ ({@link cohenKappa}) of every pair of raters over the items both labelled. */
export function pairwiseKappa(table: RatingTable): PairwiseKappa {
  const R = raterCount(table)
  const kappa: (number | null)[][] = Array.from({ length: R }, () => new Array<number | null>(R).fill(null))
  const n: number[][] = Array.from({ length: R }, () => new Array<number>(R).fill(0))
  for (let r = 0; r < R; r++)
    for (let s = r; s < R; s++) {
      const a: Category[] = []
      const b: Category[] = []
      for (const row of table) {
        const x = row[r] ?? null
        const y = row[s] ?? null
        if (x !== null && y !== null) {
          a.push(x)
          b.push(y)
        }
      }
      const k = a.length ? cohenKappa(a, b) : null
      kappa[r]![s] = k
      kappa[s]![r] = k
      n[r]![s] = a.length
      n[s]![r] = a.length
    }
  return { kappa, n }
}

function raterCount(table: RatingTable): number {
  let R = 0
  for (const row of table) R = Math.max(R, row.length)
  return R
}

export interface RaterAgreement {
  rater: number
  /** Mean of this rater's pairwise κ with every other rater (pairs with an undefined κ left out); null when none. */
  meanPairwiseKappa: number | null
  /**
   * Cohen's κ of this rater against the leave-one-out majority: on each item this rater labelled,
   * the most frequent label among the OTHER raters; items where the others tie, or where no other
   * rater labelled, are left out (no majority). Leaving the rater out keeps them from agreeing with
   * themselves.
   */
  kappaVsMajority: number | null
  /** Items used for kappaVsMajority. */
  n: number
}

/** Each rater's agreement with the rest: the mean pairwise κ and κ against the others' majority. */
export function perRaterAgreement(table: RatingTable): RaterAgreement[] {
  const R = raterCount(table)
  const pw = pairwiseKappa(table)
  const out: RaterAgreement[] = []
  for (let r = 0; r < R; r++) {
    const others = pw.kappa[r]!.filter((k, s): k is number => s !== r && k !== null)
    const mine: Category[] = []
    const majority: Category[] = []
    for (const row of table) {
      const x = row[r] ?? null
      if (x === null) continue
      const counts = new Map<Category, number>()
      for (let s = 0; s < row.length; s++) {
        const y = row[s] ?? null
        if (s === r || y === null) continue
        counts.set(y, (counts.get(y) ?? 0) + 1)
      }
      let best: Category | null = null
      let bestN = 0
      let tie = false
      for (const [c, k] of counts) {
        if (k > bestN) {
          best = c
          bestN = k
          tie = false
        } else if (k === bestN) tie = true
      }
      if (best === null || tie) continue
      mine.push(x)
      majority.push(best)
    }
    out.push({
      rater: r,
      meanPairwiseKappa: others.length ? others.reduce((s, v) => s + v, 0) / others.length : null,
      kappaVsMajority: mine.length ? cohenKappa(mine, majority) : null,
      n: mine.length,
    })
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Document preference: pairwise accuracy / AUC
// ---------------------------------------------------------------------------------------------

export interface PairwiseAccuracy {
  /** concordant / pairs; null when no pair has a gold preference. */
  auc: number | null
  /** Pairs (i, j) with gold_i > gold_j. */
  pairs: number
  /** Pairs the model orders the same way (score_i > score_j), a tie in score counting ½. */
  concordant: number
}

/** Counts over the items `idx` (Mann–Whitney with a Fenwick tree over the gold ranks): O(m log m). */
function preferenceCounts(
  gold: readonly number[],
  score: readonly number[],
  idx: number[],
): { pairs: number; concordant: number } {
  const m = idx.length
  if (m < 2) return { pairs: 0, concordant: 0 }
  const goldValues = [...new Set(idx.map((i) => gold[i]!))].sort((a, b) => a - b)
  const G = goldValues.length
  if (G < 2) return { pairs: 0, concordant: 0 }
  const rankOf = new Map(goldValues.map((g, r) => [g, r]))
  const rank = new Int32Array(m)
  const perGold = new Float64Array(G)
  idx.sort((a, b) => score[a]! - score[b]!)
  for (let p = 0; p < m; p++) {
    rank[p] = rankOf.get(gold[idx[p]!]!)!
    perGold[rank[p]!]! += 1
  }
  let sameGold = 0
  for (let r = 0; r < G; r++) sameGold += perGold[r]! * perGold[r]!
  const pairs = (m * m - sameGold) / 2
  const tree = new Float64Array(G + 1) // Fenwick tree: items with a strictly lower score, by gold rank
  const add = (r: number) => {
    for (let i = r + 1; i <= G; i += i & -i) tree[i]! += 1
  }
  const below = (r: number) => {
    // items with gold rank < r
    let s = 0
    for (let i = r; i > 0; i -= i & -i) s += tree[i]!
    return s
  }
  let concordant = 0
  const groupCount = new Map<number, number>()
  let start = 0
  while (start < m) {
    let end = start + 1
    while (end < m && score[idx[end]!] === score[idx[start]!]) end++
    groupCount.clear()
    for (let p = start; p < end; p++) {
      concordant += below(rank[p]!)
      groupCount.set(rank[p]!, (groupCount.get(rank[p]!) ?? 0) + 1)
    }
    const g = end - start
    let sq = 0
    for (const c of groupCount.values()) sq += c * c
    concordant += 0.5 * ((g * g - sq) / 2) // tied scores, different gold: ½ each
    for (let p = start; p < end; p++) add(rank[p]!)
    start = end
  }
  return { pairs, concordant }
}

/**
 * Pairwise accuracy / AUC (§B.4 4): the chance that, of two items whose gold labels differ, the
 * model scores the one with the higher gold label higher; a tie in model score counts ½.
 * AUC = (1/|P|)·Σ_{(i,j): gold_i > gold_j} ([s_i > s_j] + ½·[s_i = s_j]), computed from rank
 * statistics (Mann–Whitney U, generalised to graded gold by a Fenwick tree over the gold levels),
 * without enumerating pairs: O(n log n).
 *
 * Pairs are formed across all items (the paper's default: the better document of any query should
 * outscore the worse one of any other), or, with `topics`, only within a topic; then the counts of
 * every topic are pooled (each pair weighs the same; a topic without a gold difference adds none).
 */
export function pairwiseAccuracy(
  gold: readonly number[],
  score: readonly number[],
  topics?: readonly string[],
): PairwiseAccuracy {
  sameLength(gold, score, 'pairwiseAccuracy')
  for (const s of score)
    if (!Number.isFinite(s)) throw new RangeError('pairwiseAccuracy: scores must be finite numbers')
  let pairs = 0
  let concordant = 0
  if (!topics) {
    const r = preferenceCounts(
      gold,
      score,
      Array.from({ length: gold.length }, (_, i) => i),
    )
    pairs = r.pairs
    concordant = r.concordant
  } else {
    sameLength(gold, topics, 'pairwiseAccuracy (topics)')
    const groups = new Map<string, number[]>()
    for (let i = 0; i < topics.length; i++) {
      const g = groups.get(topics[i]!)
      if (g) g.push(i)
      else groups.set(topics[i]!, [i])
    }
    for (const idx of groups.values()) {
      const r = preferenceCounts(gold, score, idx)
      pairs += r.pairs
      concordant += r.concordant
    }
  }
  return { auc: pairs ? concordant / pairs : null, pairs, concordant }
}

// ---------------------------------------------------------------------------------------------
// Orderings: RBO and Kendall's τ
// ---------------------------------------------------------------------------------------------

export type Id = string | number

/**
 * The least truncated RBO two permutations of the same N items can have (the reversed list):
 * RBO_min(N, φ) = (1 − φ)·Σ_{d=⌊N/2⌋+1}^{N} φ^{d−1}·(2d − N)/d
 * (at depth d a list and its reverse share max(0, 2d − N) items).
 */
export function rboMin(N: number, phi: number): number {
  let s = 0
  for (let d = Math.floor(N / 2) + 1; d <= N; d++) s += phi ** (d - 1) * ((2 * d - N) / d)
  return (1 - phi) * s
}

/** The truncated RBO of two identical lists of N items: (1 − φ)·Σ_{d=1}^{N} φ^{d−1} = 1 − φ^N. */
export function rboMax(N: number, phi: number): number {
  return 1 - phi ** N
}

export interface Rbo {
  /** k: the evaluation depth, the shorter list's length unless given. */
  depth: number
  /** Truncated RBO@k = (1 − φ)·Σ_{d=1}^{k} φ^{d−1}·A_d, A_d = |S_{:d} ∩ T_{:d}| / d. */
  trunc: number
  /** RBO_min(k, φ) (see {@link rboMin}). */
  min: number
  /** 1 − φ^k (see {@link rboMax}). */
  max: number
  /**
   * (trunc − min) / (max − min) in [0, 1]: 0 for a reversed list, 1 only for identical ones. Defined
   * only when the two top-k lists are permutations of the same set (else null), and when max > min
   * (k ≥ 2). Computed as 1 − deficit/(max − min) with deficit = (1 − φ)·Σ φ^{d−1}·(d − X_d)/d, a sum
   * of terms ≥ 0, so any difference keeps it below 1 despite rounding; clamped to [0, 1] against rounding.
   */
  norm: number | null
  /** RBO_ext (Webber et al. 2010, eq. 30, lists of equal depth k): (X_k/k)·φ^k + ((1 − φ)/φ)·Σ_{d=1}^{k} (X_d/d)·φ^d. */
  ext: number
}

/**
 * Rank-biased overlap of two rankings (Webber, Moffat & Zobel 2010), best first, at depth k (default:
 * the shorter length). Ids must be distinct within each ranking.
 */
export function rbo(a: readonly Id[], b: readonly Id[], phi: number, depth?: number): Rbo {
  if (!(phi > 0 && phi < 1)) throw new RangeError('rbo: φ must lie strictly between 0 and 1')
  const k = depth ?? Math.min(a.length, b.length)
  if (!Number.isInteger(k) || k < 1 || k > a.length || k > b.length)
    throw new RangeError(`rbo: depth ${k} must be from 1 to the shorter ranking's length`)
  const inA = new Set<Id>()
  const inB = new Set<Id>()
  let X = 0
  let trunc = 0
  let deficit = 0
  let w = 1 - phi // (1 − φ)·φ^{d−1}
  for (let d = 1; d <= k; d++) {
    const x = a[d - 1]!
    const y = b[d - 1]!
    if (inA.has(x) || inB.has(y)) throw new RangeError(`rbo: ${inA.has(x) ? x : y} appears twice in a ranking`)
    if (x === y) X++
    else {
      if (inB.has(x)) X++
      if (inA.has(y)) X++
    }
    inA.add(x)
    inB.add(y)
    trunc += (w * X) / d
    deficit += (w * (d - X)) / d
    w *= phi
  }
  const min = rboMin(k, phi)
  const max = rboMax(k, phi)
  const ext = trunc + (X / k) * phi ** k
  const norm = X === k && max > min ? Math.min(1, Math.max(0, 1 - deficit / (max - min))) : null
  return { depth: k, trunc, min, max, norm, ext }
}

/**
 * Kendall's τ-b of two paired lists of numbers (ties allowed):
 * τ_b = (n_c − n_d) / √((n_0 − n_1)(n_0 − n_2)), n_0 = n(n − 1)/2, n_1 = Σ t_i(t_i − 1)/2 over the
 * ties in x, n_2 the same in y. Knight's O(n log n) algorithm: sort by (x, y), count x-ties and joint
 * ties n_3, count the swaps S of a merge sort by y; n_c − n_d = n_0 − n_1 − n_2 + n_3 − 2S.
 * null when a list is constant (or n < 2).
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number | null {
  sameLength(x, y, 'kendallTauB')
  const n = x.length
  if (n < 2) return null
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => x[i]! - x[j]! || y[i]! - y[j]!)
  let n1 = 0
  let n3 = 0
  let tx = 1
  let txy = 1
  for (let p = 1; p <= n; p++) {
    const sameX = p < n && x[order[p]!] === x[order[p - 1]!]
    const sameXY = sameX && y[order[p]!] === y[order[p - 1]!]
    if (sameX) tx++
    else {
      n1 += (tx * (tx - 1)) / 2
      tx = 1
    }
    if (sameXY) txy++
    else {
      n3 += (txy * (txy - 1)) / 2
      txy = 1
    }
  }
  // merge sort of y (in x order), counting the swaps
  let arr = Float64Array.from(order, (i) => y[i]!)
  let buf = new Float64Array(n)
  let swaps = 0
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n)
      const hi = Math.min(lo + 2 * width, n)
      let i = lo
      let j = mid
      let o = lo
      while (i < mid && j < hi) {
        if (arr[j]! < arr[i]!) {
          swaps += mid - i
          buf[o++] = arr[j++]!
        } else buf[o++] = arr[i++]!
      }
      while (i < mid) buf[o++] = arr[i++]!
      while (j < hi) buf[o++] = arr[j++]!
    }
    ;[arr, buf] = [buf, arr]
  }
  let n2 = 0
  let ty = 1
  for (let p = 1; p <= n; p++) {
    if (p < n && arr[p] === arr[p - 1]) ty++
    else {
      n2 += (ty * (ty - 1)) / 2
      ty = 1
    }
  }
  const n0 = (n * (n - 1)) / 2
  const denom = Math.sqrt((n0 - n1) * (n0 - n2))
  if (denom === 0) return null
  return (n0 - n1 - n2 + n3 - 2 * swaps) / denom
}

/**
 * Kendall's τ of two rankings of ids (best first) over the ids both contain: τ-b of their positions
 * (no ties, so τ-b = τ-a). Returns the ids compared as `n`; tau null when n < 2.
 */
export function kendallTauOfRankings(a: readonly Id[], b: readonly Id[]): { n: number; tau: number | null } {
  const posB = new Map<Id, number>()
  b.forEach((id, i) => {
    if (posB.has(id)) throw new RangeError(`kendallTau: ${id} appears twice in a ranking`)
    posB.set(id, i)
  })
  const seen = new Set<Id>()
  const x: number[] = []
  const y: number[] = []
  a.forEach((id, i) => {
    if (seen.has(id)) throw new RangeError(`kendallTau: ${id} appears twice in a ranking`)
    seen.add(id)
    const j = posB.get(id)
    if (j !== undefined) {
      x.push(i)
      y.push(j)
    }
  })
  return { n: x.length, tau: kendallTauB(x, y) }
}

/**
 * Ids sorted by their score: 'asc' puts the lowest first (the hardest queries, §B.4 5), 'desc' the
 * highest first (the best runs). Equal scores are ordered by id (strings compared as code units,
 * numbers numerically) so an ordering is reproducible.
 */
export function orderByScore(
  scores: ReadonlyMap<Id, number> | Record<string, number>,
  direction: 'asc' | 'desc',
): Id[] {
  const entries: [Id, number][] = scores instanceof Map ? [...scores] : Object.entries(scores)
  const sign = direction === 'asc' ? 1 : -1
  return entries.sort(([ia, sa], [ib, sb]) => sign * (sa - sb) || (ia < ib ? -1 : ia > ib ? 1 : 0)).map(([id]) => id)
}

// ---------------------------------------------------------------------------------------------
// Per-query IR metrics of a run under a set of labels
// ---------------------------------------------------------------------------------------------

/** A run: per query, the ranked document ids (best first). */
export type Run = Readonly<Record<string, readonly string[]>>
/** Qrels: per query, per document, the label (0, 1, 2 …). */
export type Qrels = Readonly<Record<string, Readonly<Record<string, number>>>>

export interface QueryMetrics {
  /** P@10 = (relevant in the top 10) / 10 (a shorter list still divides by 10, as trec_eval). */
  p10: number
  /** RBP@100 = (1 − φ)·Σ_{i=1}^{100} φ^{i−1}·rel_i, φ = 0.6 by default. */
  rbp100: number
  /**
   * AP@100 = (1/R)·Σ_{k ≤ 100, rel_k} P@k, R = the number of relevant judged documents of the query
   * in the qrels (trec_eval's choice: relevant documents the run misses count against it); 0 when R = 0.
   */
  ap100: number
}

/**
 * P@10, RBP@100 and AP@100 of every query of the run (§B.4 5, §B.5.7). Relevant = label ≥ 1
 * (binarised, `threshold` to change); a document without a judgement is not relevant. Duplicate
 * documents in a ranking count once (their first position). Queries the run lacks are not scored.
 */
export function perQueryMetrics(
  run: Run,
  qrels: Qrels,
  options: { rbpPhi?: number; threshold?: number } = {},
): Record<string, QueryMetrics> {
  const phi = options.rbpPhi ?? 0.6
  const threshold = options.threshold ?? 1
  const out: Record<string, QueryMetrics> = {}
  for (const [q, docs] of Object.entries(run)) {
    const judged = qrels[q] ?? {}
    let R = 0
    for (const label of Object.values(judged)) if (label >= threshold) R++
    const seen = new Set<string>()
    let rel = 0
    let p10 = 0
    let rbp = 0
    let apSum = 0
    let w = 1 - phi
    let rank = 0
    for (const doc of docs) {
      if (rank >= 100) break
      if (seen.has(doc)) continue
      seen.add(doc)
      rank++
      const isRel = (judged[doc] ?? 0) >= threshold
      if (isRel) {
        rel++
        rbp += w
        apSum += rel / rank
        if (rank <= 10) p10++
      }
      w *= phi
    }
    out[q] = { p10: p10 / 10, rbp100: rbp, ap100: R ? apSum / R : 0 }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Uncertainty: PRNG, bootstrap, t-test
// ---------------------------------------------------------------------------------------------

/** A source of uniform numbers in [0, 1). */
export type Rng = () => number

/** mulberry32: a small seeded 32-bit PRNG (uniform in [0, 1)); the same seed gives the same stream. */
export function mulberry32(seed: number): Rng {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Fisher–Yates shuffle in place with the given PRNG. */
export function shuffle<T extends { length: number; [i: number]: unknown }>(arr: T, rng: Rng): T {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    const t = arr[i]
    arr[i] = arr[j]
    arr[j] = t
  }
  return arr
}

/** The p-quantile of sorted values, linear interpolation between order statistics (type 7). */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const m = sorted.length
  if (m === 0) throw new RangeError('quantile of nothing')
  const h = (m - 1) * p
  const lo = Math.floor(h)
  const hi = Math.min(lo + 1, m - 1)
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!)
}

export interface BootstrapOptions {
  /** B, the resamples; 20 as in the paper (§B.4 8). */
  resamples?: number
  seed?: number
  /** The interval's coverage, 0.95 by default. */
  level?: number
}

export interface BootstrapInterval {
  /** The statistic on the items as given. */
  estimate: number | null
  /** Percentile interval: the (1 − level)/2 and (1 + level)/2 quantiles of the defined resample values. */
  lo: number | null
  hi: number | null
  level: number
  resamples: number
  /** The statistic of each resample (NaN where it was undefined). */
  samples: Float64Array
}

function percentileInterval(estimate: number | null, samples: Float64Array, level: number): BootstrapInterval {
  const defined = Float64Array.from(samples.filter((v) => !Number.isNaN(v))).sort()
  const a = (1 - level) / 2
  return {
    estimate,
    lo: defined.length ? quantileSorted(defined, a) : null,
    hi: defined.length ? quantileSorted(defined, 1 - a) : null,
    level,
    resamples: samples.length,
    samples,
  }
}

function bootstrapSettings(o: BootstrapOptions) {
  const resamples = o.resamples ?? 20
  const level = o.level ?? 0.95
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError('bootstrap: resamples must be a whole number ≥ 1')
  if (!(level > 0 && level < 1)) throw new RangeError('bootstrap: level must lie between 0 and 1')
  return { resamples, level, rng: mulberry32(o.seed ?? 1) }
}

/**
 * Seeded bootstrap over items (§B.4 8): B times, draw n item indices with replacement, compute the
 * statistic on them; report the percentile interval. `statistic(idx)` gets the drawn indices (the
 * identity for the estimate; one buffer reused, so copy it to keep it) and may return null (undefined).
 */
export function bootstrap(
  n: number,
  statistic: (idx: Uint32Array) => number | null,
  options: BootstrapOptions = {},
): BootstrapInterval {
  const { resamples, level, rng } = bootstrapSettings(options)
  const idx = new Uint32Array(n)
  for (let i = 0; i < n; i++) idx[i] = i
  const estimate = statistic(idx)
  const samples = new Float64Array(resamples)
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) idx[i] = Math.floor(rng() * n)
    samples[b] = statistic(idx) ?? Number.NaN
  }
  return percentileInterval(estimate, samples, level)
}

/**
 * Binarised κ with a bootstrap interval, on typed arrays: each resample counts its 2×2 table while
 * drawing, O(n·B) time and O(n) memory (1,000 resamples of 3,000 items well under 200 ms).
 */
export function bootstrapKappa(
  gold: readonly number[],
  model: readonly number[],
  options: BootstrapOptions = {},
): BootstrapInterval {
  sameLength(gold, model, 'bootstrapKappa')
  const { resamples, level, rng } = bootstrapSettings(options)
  const n = gold.length
  const cell = new Uint8Array(n) // 2·model + gold
  for (let i = 0; i < n; i++) cell[i] = 2 * binarise(model[i]!) + binarise(gold[i]!)
  const counts = new Float64Array(4)
  const kappaOfCounts = () =>
    kappaOfConfusion({
      model0_gold0: counts[0]!,
      model0_gold1: counts[1]!,
      model1_gold0: counts[2]!,
      model1_gold1: counts[3]!,
    })
  for (let i = 0; i < n; i++) counts[cell[i]!]! += 1
  const estimate = kappaOfCounts()
  const samples = new Float64Array(resamples)
  for (let b = 0; b < resamples; b++) {
    counts.fill(0)
    for (let i = 0; i < n; i++) counts[cell[Math.floor(rng() * n)]!]! += 1
    samples[b] = kappaOfCounts() ?? Number.NaN
  }
  return percentileInterval(estimate, samples, level)
}

/** ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 coefficients; relative error ~1e-15). */
export function lnGamma(x: number): number {
  const g = 7
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x) // reflection
  const z = x - 1
  let a = c[0]!
  const t = z + g + 0.5
  for (let i = 1; i < g + 2; i++) a += c[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 1000; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-15) break
  }
  return h
}

/**
 * The regularised incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), from its continued
 * fraction: I_x(a, b) = x^a (1 − x)^b / (a·B(a, b)) · CF(x; a, b) when x < (a + 1)/(a + b + 2),
 * else 1 − I_{1−x}(b, a).
 */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x))
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(x, a, b)) / a
  return 1 - (front * betaContinuedFraction(1 - x, b, a)) / b
}

/**
 * Student's t upper tail P(T > t) with ν degrees of freedom: for t ≥ 0 it is ½·I_{ν/(ν + t²)}(ν/2, ½),
 * for t < 0 it is 1 − P(T > −t).
 */
export function studentTUpperTail(t: number, df: number): number {
  if (!(df > 0)) throw new RangeError('studentT: df must be > 0')
  if (t === Number.POSITIVE_INFINITY) return 0
  if (t === Number.NEGATIVE_INFINITY) return 1
  const tail = 0.5 * regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5)
  return t >= 0 ? tail : 1 - tail
}

/** Student's t CDF P(T ≤ t) = 1 − P(T > t). */
export function studentTCdf(t: number, df: number): number {
  return 1 - studentTUpperTail(t, df)
}

export interface TTest {
  /** null when the spread is 0 (then p is 0 if mean(a) > mean(b), else 1). */
  t: number | null
  df: number
  /** One-sided p-value for H1: mean(a) > mean(b). */
  p: number
  meanA: number
  meanB: number
}

function meanVar(v: readonly number[]): [number, number] {
  const n = v.length
  let m = 0
  for (const x of v) m += x
  m /= n
  let s = 0
  for (const x of v) s += (x - m) ** 2
  return [m, n > 1 ? s / (n - 1) : 0]
}

/**
 * Welch's one-sided t-test, H1: mean(a) > mean(b): t = (m_a − m_b) / √(s_a²/n_a + s_b²/n_b),
 * ν = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a − 1) + (s_b²/n_b)²/(n_b − 1)) (Welch–Satterthwaite).
 */
export function welchTTest(a: readonly number[], b: readonly number[]): TTest {
  if (a.length < 2 || b.length < 2) throw new RangeError('welchTTest: each sample needs at least 2 values')
  const [ma, va] = meanVar(a)
  const [mb, vb] = meanVar(b)
  const qa = va / a.length
  const qb = vb / b.length
  const se2 = qa + qb
  const df = se2 === 0 ? a.length + b.length - 2 : se2 ** 2 / (qa ** 2 / (a.length - 1) + qb ** 2 / (b.length - 1))
  if (se2 === 0) return { t: null, df, p: ma > mb ? 0 : 1, meanA: ma, meanB: mb }
  const t = (ma - mb) / Math.sqrt(se2)
  return { t, df, p: studentTUpperTail(t, df), meanA: ma, meanB: mb }
}

/**
 * Paired one-sided t-test, H1: mean(a − b) > 0: t = d̄ / (s_d/√n), ν = n − 1, d_i = a_i − b_i.
 * The right test for two prompts scored on the same bootstrap resamples (the same documents).
 */
export function pairedTTest(a: readonly number[], b: readonly number[]): TTest {
  sameLength(a, b, 'pairedTTest')
  if (a.length < 2) throw new RangeError('pairedTTest: at least 2 pairs')
  const d = a.map((x, i) => x - b[i]!)
  const [md, vd] = meanVar(d)
  const [ma] = meanVar(a)
  const [mb] = meanVar(b)
  const df = a.length - 1
  if (vd === 0) return { t: null, df, p: md > 0 ? 0 : 1, meanA: ma, meanB: mb }
  const t = md / Math.sqrt(vd / a.length)
  return { t, df, p: studentTUpperTail(t, df), meanA: ma, meanB: mb }
}

export interface BestMark {
  best: string
  nextBest: string
  test: TTest
  /** p < alpha: the best is marked † (§B.4 8). */
  significant: boolean
}

/**
 * The paper's † (§B.4 8): the variant with the best mean over its samples, tested one-sided against
 * the next best. The paper does not say which t-test; Parley's default is the paired test, for
 * variants scored on the same bootstrap resamples (sample b of every variant from the same drawn
 * documents, as {@link bootstrap} with one seed gives); `paired: false` uses Welch's test.
 * `higherIsBetter: false` for MAE.
 */
export function markBest(
  variants: readonly { id: string; samples: readonly number[] }[],
  options: { paired?: boolean; alpha?: number; higherIsBetter?: boolean } = {},
): BestMark {
  if (variants.length < 2) throw new RangeError('markBest: at least 2 variants')
  const sign = options.higherIsBetter === false ? -1 : 1
  const ranked = variants
    .map((v) => ({ v, mean: sign * meanVar(v.samples)[0] }))
    .sort((x, y) => y.mean - x.mean || (x.v.id < y.v.id ? -1 : 1))
  const best = ranked[0]!.v
  const next = ranked[1]!.v
  const flip = (s: readonly number[]) => s.map((x) => sign * x)
  const test = ((options.paired ?? true) ? pairedTTest : welchTTest)(flip(best.samples), flip(next.samples))
  return { best: best.id, nextBest: next.id, test, significant: test.p < (options.alpha ?? 0.05) }
}

// ---------------------------------------------------------------------------------------------
// Prompt lab: factorial main effects, split-half selection stability
// ---------------------------------------------------------------------------------------------

export interface MainEffect {
  /** mean(value | feature on) − mean(value | feature off); null when either side is empty. */
  effect: number | null
  meanOn: number | null
  meanOff: number | null
  nOn: number
  nOff: number
}

/**
 * Main effects of binary features in a 2^k factorial (§B.5.3): effect_f = mean(value | f on) −
 * mean(value | f off). In a full, balanced factorial this equals the OLS coefficient of f (coded 0/1)
 * in a model with every main effect. Every row must name the same features.
 */
export function mainEffects(
  rows: readonly { features: Readonly<Record<string, boolean>>; value: number }[],
): Record<string, MainEffect> {
  if (!rows.length) return {}
  const names = Object.keys(rows[0]!.features).sort()
  const acc = new Map(names.map((f) => [f, { on: 0, off: 0, nOn: 0, nOff: 0 }]))
  rows.forEach((row, i) => {
    const keys = Object.keys(row.features).sort()
    if (keys.join('\u0000') !== names.join('\u0000'))
      throw new RangeError(`mainEffects: row ${i} names features ${keys.join(', ')}, row 0 ${names.join(', ')}`)
    for (const f of names) {
      const a = acc.get(f)!
      if (row.features[f]) {
        a.on += row.value
        a.nOn++
      } else {
        a.off += row.value
        a.nOff++
      }
    }
  })
  const out: Record<string, MainEffect> = {}
  for (const [f, a] of acc) {
    const meanOn = a.nOn ? a.on / a.nOn : null
    const meanOff = a.nOff ? a.off / a.nOff : null
    out[f] = {
      effect: meanOn !== null && meanOff !== null ? meanOn - meanOff : null,
      meanOn,
      meanOff,
      nOn: a.nOn,
      nOff: a.nOff,
    }
  }
  return out
}

/** A statistic of one variant's labels against gold, on the items `idx` (null when undefined). */
export type VariantStatistic<L> = (labels: readonly L[], gold: readonly L[], idx: Uint32Array) => number | null

/** Binarised Cohen's κ of labels against gold on the items idx (the paper's selection statistic). */
export const kappaStatistic: VariantStatistic<number> = (labels, gold, idx) => {
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  for (let p = 0; p < idx.length; p++) {
    const i = idx[p]!
    const m = labels[i]! >= 1
    const g = gold[i]! >= 1
    if (!m) g ? b++ : a++
    else g ? d++ : c++
  }
  return kappaOfConfusion({ model0_gold0: a, model0_gold1: b, model1_gold0: c, model1_gold1: d })
}

export interface SplitHalfStability {
  iterations: number
  /** Iterations where the variant chosen on half A scored strictly better than the baseline on half B. */
  winsOverBaseline: number
  /** Iterations where they scored the same on half B (always so when the baseline itself is chosen). */
  tiesWithBaseline: number
  /** How often each variant was chosen on half A. */
  chosen: Record<string, number>
}

/**
 * Split-half selection stability (§B.5.6): each iteration shuffles the items (seeded), takes the
 * first ⌊n/2⌋ as half A and the rest as half B, chooses the variant with the best statistic on A
 * (ties: the first in the order given; an undefined statistic never wins), and compares it on B
 * with the baseline. Higher statistic = better.
 */
export function splitHalfStability<L>(input: {
  variants: Readonly<Record<string, readonly L[]>>
  gold: readonly L[]
  baseline: string
  statistic: VariantStatistic<L>
  iterations?: number
  seed?: number
}): SplitHalfStability {
  const { variants, gold, baseline, statistic } = input
  const iterations = input.iterations ?? 1000
  const names = Object.keys(variants)
  if (!names.includes(baseline)) throw new RangeError(`splitHalfStability: the baseline ${baseline} is not a variant`)
  for (const v of names) sameLength(variants[v]!, gold, `splitHalfStability (${v})`)
  const n = gold.length
  if (n < 2) throw new RangeError('splitHalfStability: at least 2 items')
  const rng = mulberry32(input.seed ?? 1)
  const order = new Uint32Array(n)
  for (let i = 0; i < n; i++) order[i] = i
  const half = Math.floor(n / 2)
  const chosen: Record<string, number> = Object.fromEntries(names.map((v) => [v, 0]))
  let wins = 0
  let ties = 0
  for (let it = 0; it < iterations; it++) {
    shuffle(order, rng)
    const A = order.subarray(0, half)
    const B = order.subarray(half)
    let best: string | null = null
    let bestValue = Number.NEGATIVE_INFINITY
    for (const v of names) {
      const s = statistic(variants[v]!, gold, A)
      if (s !== null && s > bestValue) {
        best = v
        bestValue = s
      }
    }
    if (best === null) continue
    chosen[best]!++
    const sb = statistic(variants[best]!, gold, B)
    const base = statistic(variants[baseline]!, gold, B)
    if (sb === null || base === null) continue
    if (sb > base) wins++
    else if (sb === base) ties++
  }
  return { iterations, winsOverBaseline: wins, tiesWithBaseline: ties, chosen }
}
