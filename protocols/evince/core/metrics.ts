/**
 * EVINCE metrics (Chang, arXiv 2408.14575 v1, §3.1 and Appendix D), pure. Logarithms are base 2
 * everywhere, so every quantity is in bits and JSD, WD and NMI lie in [0, 1].
 *
 * The paper leaves alignment, smoothing, the Wasserstein ground metric and the joint behind MI open
 * (../shared/reference/evince.md §2, §4). Parley's binding choices:
 *
 * - Alignment: labels are canonicalised (parentheticals stripped, whitespace collapsed, case-folded,
 *   aliases applied); the support is the union of both agents' labels in order of first appearance
 *   (A's list, then B's new labels); a label an agent did not list gets 0; each distribution is
 *   renormalised to sum 1. Raw sums are kept and a warning is raised when |Σ − 1| > 0.02.
 * - KL and cross-entropy use ε-smoothing over the n union labels: p′ = (p + ε)/(1 + n·ε), ε = 0.001.
 * - JSD is unsmoothed: ½·KL(P‖M) + ½·KL(Q‖M), M = ½(P + Q).
 * - WD uses the 0/1 ground metric, so W(P, Q) = ½·Σ|P − Q| (total variation), shown as "WD %".
 *   An ordinal W1 over a declared label order is available: Σ_i |CDF_P(i) − CDF_Q(i)| / (n − 1).
 * - MI uses the maximal-agreement coupling: d = min(P_A, P_B), r_A = P_A − d, r_B = P_B − d,
 *   m = 1 − Σd; J(x,x) = d(x) + r_A(x)·r_B(x)/m, J(x,y) = r_A(x)·r_B(y)/m (x ≠ y), no residual term
 *   when m = 0. J has marginals P_A and P_B; MI = Σ J·log2(J/(P_A·P_B)). NMI = MI / max(H_A, H_B),
 *   1 when P_A = P_B, 0 when both entropies are 0 and the distributions differ.
 */
import { z } from 'zod'

export interface LabelProb {
  label: string
  probability: number
  justification?: string
}
export type Aliases = Record<string, string>

export class MetricsInputError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MetricsInputError'
  }
}

const log2 = Math.log2

/** Parentheticals and brackets removed, whitespace collapsed, trimmed, lower-cased. */
function basic(label: string): string {
  let s = label
  // Nested parentheses: strip innermost first until none are left.
  for (let i = 0; i < 5 && /\([^()]*\)|\[[^[\]]*\]/.test(s); i++) s = s.replace(/\([^()]*\)|\[[^[\]]*\]/g, ' ')
  return s.replace(/\s+/g, ' ').trim().toLowerCase()
}

/**
 * The canonical form of a label: `basic` (parentheticals stripped, whitespace collapsed, case-folded),
 * then the alias map (keys and values canonicalised the same way), followed transitively; a cycle
 * stops at the first repeat.
 */
export function canonicalLabel(label: string, aliases: Aliases = {}): string {
  let c = basic(label)
  const keys = Object.keys(aliases)
  if (!keys.length) return c
  const map = new Map(keys.map((k) => [basic(k), basic(aliases[k] as string)]))
  const seen = new Set([c])
  for (let next = map.get(c); next !== undefined && !seen.has(next); next = map.get(c)) {
    c = next
    seen.add(c)
  }
  return c
}

/** A label as shown: the original spelling with parentheticals removed and whitespace collapsed. */
export function displayName(label: string): string {
  return (
    label
      .replace(/\([^()]*\)|\[[^[\]]*\]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim() || label.trim()
  )
}

export interface Aligned {
  /** Canonical labels, the union in order of first appearance. */
  labels: string[]
  /** The first original spelling of each label (parentheticals removed). */
  names: string[]
  p: number[]
  q: number[]
  rawSumA: number
  rawSumB: number
  warnings: string[]
}

function collect(list: readonly LabelProb[], who: string, aliases: Aliases, warnings: string[]) {
  if (!list.length) throw new MetricsInputError(`${who} lists no labels.`)
  const out = new Map<string, { p: number; name: string }>()
  let sum = 0
  for (const item of list) {
    const p = item.probability
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0)
      throw new MetricsInputError(`${who}: the probability of "${item.label}" is not a non-negative number (${p}).`)
    const c = canonicalLabel(item.label, aliases)
    if (!c) throw new MetricsInputError(`${who}: a label is empty.`)
    const had = out.get(c)
    if (had) {
      warnings.push(`${who} lists "${item.label}" more than once (as "${had.name}"); the probabilities are added.`)
      had.p += p
    } else out.set(c, { p, name: displayName(item.label) })
    sum += p
  }
  if (sum <= 0) throw new MetricsInputError(`${who}: the probabilities sum to 0.`)
  if (Math.abs(sum - 1) > 0.02)
    warnings.push(`${who}'s probabilities sum to ${Number(sum.toFixed(4))}, not 1; they are renormalised.`)
  return { map: out, sum }
}

/**
 * Align two top-k lists on the union of their canonical labels (A's order first), fill labels an
 * agent did not list with 0, and renormalise each to sum 1. Values are read as given: a list in
 * percent (summing to 100) is renormalised like any other, with a warning. Throws
 * {@link MetricsInputError} for an empty list, a negative or non-finite value, or a zero sum.
 */
export function align(a: readonly LabelProb[], b: readonly LabelProb[], opts: { aliases?: Aliases } = {}): Aligned {
  const warnings: string[] = []
  const A = collect(a, 'A', opts.aliases ?? {}, warnings)
  const B = collect(b, 'B', opts.aliases ?? {}, warnings)
  const labels: string[] = []
  const names: string[] = []
  for (const [c, v] of A.map) {
    labels.push(c)
    names.push(v.name)
  }
  for (const [c, v] of B.map)
    if (!A.map.has(c)) {
      labels.push(c)
      names.push(v.name)
    }
  return {
    labels,
    names,
    p: labels.map((l) => (A.map.get(l)?.p ?? 0) / A.sum),
    q: labels.map((l) => (B.map.get(l)?.p ?? 0) / B.sum),
    rawSumA: A.sum,
    rawSumB: B.sum,
    warnings,
  }
}

/** H(P) = −Σ p·log2 p, with 0·log 0 = 0. */
export function entropy(p: readonly number[]): number {
  let h = 0
  for (const x of p) if (x > 0) h -= x * log2(x)
  return h
}

/** ε-smoothing over the n labels: p′ = (p + ε)/(1 + n·ε) (still sums to 1 when P does). */
export function smooth(p: readonly number[], epsilon = 0.001): number[] {
  const z = 1 + p.length * epsilon
  return p.map((x) => (x + epsilon) / z)
}

/** KL(P‖Q) = Σ p′·log2(p′/q′) on ε-smoothed distributions (ε = 0 gives the raw KL, ∞ if q = 0 < p). */
export function kl(p: readonly number[], q: readonly number[], epsilon = 0.001): number {
  const ps = smooth(p, epsilon)
  const qs = smooth(q, epsilon)
  let d = 0
  for (let i = 0; i < ps.length; i++) {
    const x = ps[i] as number
    if (x > 0) d += x * log2(x / (qs[i] as number))
  }
  return Math.max(0, d)
}

/** Cross-entropy H(P, Q) = −Σ p′·log2 q′ on ε-smoothed distributions; H(P′,Q′) = H(P′) + KL(P′‖Q′). */
export function crossEntropy(p: readonly number[], q: readonly number[], epsilon = 0.001): number {
  const ps = smooth(p, epsilon)
  const qs = smooth(q, epsilon)
  let h = 0
  for (let i = 0; i < ps.length; i++) {
    const x = ps[i] as number
    if (x > 0) h -= x * log2(qs[i] as number)
  }
  return h
}

/** JSD(P‖Q) = ½·KL(P‖M) + ½·KL(Q‖M), M = ½(P + Q), unsmoothed; in [0, 1] in bits. */
export function jsd(p: readonly number[], q: readonly number[]): number {
  let d = 0
  for (let i = 0; i < p.length; i++) {
    const x = p[i] as number
    const y = q[i] as number
    const m = (x + y) / 2
    // Logs taken apart so subnormal probabilities (whose halves round to 0) cannot divide by zero.
    if (m > 0) {
      const lm = log2(m)
      if (x > 0) d += 0.5 * x * (log2(x) - lm)
      if (y > 0) d += 0.5 * y * (log2(y) - lm)
    }
  }
  return Math.min(1, Math.max(0, d))
}

/** Wasserstein distance with the 0/1 ground metric = total variation ½·Σ|P − Q|, in [0, 1]. */
export function wasserstein01(p: readonly number[], q: readonly number[]): number {
  let s = 0
  for (let i = 0; i < p.length; i++) s += Math.abs((p[i] as number) - (q[i] as number))
  return Math.min(1, s / 2)
}

/**
 * Ordinal W1 over the positions 0 … n−1 of a declared label order, normalised by the largest
 * possible distance (n − 1) so it lies in [0, 1]: Σ_{i<n−1} |CDF_P(i) − CDF_Q(i)| / (n − 1).
 */
export function wassersteinOrdinal(p: readonly number[], q: readonly number[]): number {
  if (p.length < 2) return 0
  let cp = 0
  let cq = 0
  let s = 0
  for (let i = 0; i < p.length - 1; i++) {
    cp += p[i] as number
    cq += q[i] as number
    s += Math.abs(cp - cq)
  }
  return Math.min(1, s / (p.length - 1))
}

const TINY = 1e-12

/** The maximal-agreement coupling J of P_A and P_B (rows: A's label, columns: B's label). */
export function coupling(p: readonly number[], q: readonly number[]): number[][] {
  const n = p.length
  const d = p.map((x, i) => Math.min(x, q[i] as number))
  const rA = p.map((x, i) => x - (d[i] as number))
  const rB = q.map((y, i) => y - (d[i] as number))
  const m = 1 - d.reduce((s, x) => s + x, 0)
  const J: number[][] = []
  for (let x = 0; x < n; x++) {
    const row: number[] = []
    for (let y = 0; y < n; y++) {
      const residual = m > TINY ? ((rA[x] as number) * (rB[y] as number)) / m : 0
      row.push((x === y ? (d[x] as number) : 0) + residual)
    }
    J.push(row)
  }
  return J
}

/** MI = Σ J(x,y)·log2(J(x,y) / (P_A(x)·P_B(y))) over the maximal-agreement coupling. */
export function mutualInformation(p: readonly number[], q: readonly number[]): number {
  const J = coupling(p, q)
  let mi = 0
  for (let x = 0; x < p.length; x++)
    for (let y = 0; y < q.length; y++) {
      const j = (J[x] as number[])[y] as number
      // In logs: the product of two tiny marginals can underflow to 0.
      if (j > 0) mi += j * (log2(j) - log2(p[x] as number) - log2(q[y] as number))
    }
  return Math.max(0, mi)
}

/** NMI = MI / max(H_A, H_B); 1 when P_A = P_B, 0 when both entropies are 0 and they differ. */
export function normalizedMI(p: readonly number[], q: readonly number[]): number {
  if (wasserstein01(p, q) <= TINY) return 1
  const h = Math.max(entropy(p), entropy(q))
  if (h <= TINY) return 0
  return Math.min(1, Math.max(0, mutualInformation(p, q) / h))
}

export interface RoundMetrics {
  /** Display names of the aligned labels (A's order first). */
  labels: string[]
  entropyA: number
  entropyB: number
  klAB: number
  klBA: number
  crossEntropyAB: number
  crossEntropyBA: number
  jsd: number
  wd: number
  mi: number
  nmi: number
  /** Ordinal W1, only with a declared label order. */
  wdOrdinal?: number
  rawSumA: number
  rawSumB: number
  warnings: string[]
}

/** Every metric of one round, from the two agents' raw lists. */
export function roundMetrics(
  a: readonly LabelProb[],
  b: readonly LabelProb[],
  opts: { epsilon?: number; aliases?: Aliases; order?: readonly string[] } = {},
): RoundMetrics {
  const x = align(a, b, opts)
  const eps = opts.epsilon ?? 0.001
  const out: RoundMetrics = {
    labels: x.names,
    entropyA: entropy(x.p),
    entropyB: entropy(x.q),
    klAB: kl(x.p, x.q, eps),
    klBA: kl(x.q, x.p, eps),
    crossEntropyAB: crossEntropy(x.p, x.q, eps),
    crossEntropyBA: crossEntropy(x.q, x.p, eps),
    jsd: jsd(x.p, x.q),
    wd: wasserstein01(x.p, x.q),
    mi: mutualInformation(x.p, x.q),
    nmi: normalizedMI(x.p, x.q),
    rawSumA: x.rawSumA,
    rawSumB: x.rawSumB,
    warnings: x.warnings,
  }
  if (opts.order?.length) {
    const order = opts.order.map((l) => canonicalLabel(l, opts.aliases))
    const missing = x.labels.filter((l) => !order.includes(l))
    if (missing.length) throw new MetricsInputError(`Labels missing from the declared order: ${missing.join(', ')}.`)
    const idx = new Map(x.labels.map((l, i) => [l, i]))
    const P = order.map((l) => x.p[idx.get(l) ?? -1] ?? 0)
    const Q = order.map((l) => x.q[idx.get(l) ?? -1] ?? 0)
    out.wdOrdinal = wassersteinOrdinal(P, Q)
  }
  return out
}

const fileLabel = z.object({
  label: z.string({ error: 'a label must be a string' }).min(1, 'a label is empty'),
  probability: z.number({ error: 'a probability must be a number' }),
})

/** The `parley evince metrics` input: the two agents' distributions per round (extra keys ignored). */
export const debateFileSchema = z.object({
  rounds: z
    .array(
      z.object({
        A: z.array(fileLabel).min(1, 'A lists no labels'),
        B: z.array(fileLabel).min(1, 'B lists no labels'),
      }),
    )
    .min(1, 'the file has no rounds'),
  epsilon: z.number().min(0).max(0.1).optional(),
  aliases: z.record(z.string(), z.string()).optional(),
})
export type DebateFile = z.infer<typeof debateFileSchema>

/** Every metric per round of a debate file (what `parley evince metrics` prints). */
export function debateMetrics(input: DebateFile) {
  return {
    rounds: input.rounds.map((r, i) => {
      try {
        const {
          wdOrdinal: _w,
          rawSumA: _a,
          rawSumB: _b,
          ...m
        } = roundMetrics(r.A, r.B, {
          epsilon: input.epsilon,
          aliases: input.aliases,
        })
        return { round: i + 1, ...m }
      } catch (err) {
        if (err instanceof MetricsInputError) throw new MetricsInputError(`round ${i + 1}: ${err.message}`)
        throw err
      }
    }),
  }
}

/**
 * Contentiousness of round r: Δ₀ for r ≤ hold, then Δ₀·decay^(r − hold).
 * Defaults (paper, Fig. 1 and footnote 1): 0.9, 0.9, 0.675, 0.50625, 0.3796875 …
 */
export function contentiousness(round: number, s: { initial?: number; decay?: number; hold?: number } = {}): number {
  const initial = s.initial ?? 0.9
  const decay = s.decay ?? 0.75
  const hold = s.hold ?? 2
  return round <= hold ? initial : initial * decay ** (round - hold)
}

/** The rows of the paper's Table 2 (linguistic behaviour per contentiousness level), verbatim. */
export const TONES = [
  {
    level: 0.9,
    tone: 'Highly confrontational; focused on raising strong ethical, scientific, and social objections.',
    emphasis:
      'Flagging risks and downsides; ethical quandaries, unintended consequences, and exacerbation of inequalities.',
    language:
      'Definitive and polarizing, e.g., "should NOT be allowed," "unacceptable risks," "inevitable disparities."',
  },
  {
    level: 0.7,
    tone: 'Still confrontational but more open to potential benefits, albeit overshadowed by negatives.',
    emphasis:
      'Acknowledging that some frameworks could make it safer or more equitable, while cautioning against its use.',
    language: 'Less polarizing; "serious concerns remain," "needs more scrutiny."',
  },
  {
    level: 0.5,
    tone: 'Balanced; neither advocating strongly for nor against gene editing.',
    emphasis: 'Equal weight on pros and cons; looking for a middle ground.',
    language: 'Neutral; "should be carefully considered," "both benefits and risks."',
  },
  {
    level: 0.3,
    tone: 'More agreeable than confrontational, but maintaining reservations.',
    emphasis: 'Supportive but cautious; focus on ensuring ethical and equitable use.',
    language: 'Positive but careful; "transformative potential," "impetus to ensure."',
  },
  {
    level: 0.0,
    tone: 'Completely agreeable and supportive.',
    emphasis: 'Fully focused on immense potential benefits; advocating for proactive adoption.',
    language: 'Very positive; "groundbreaking advance," "new era of possibilities."',
  },
] as const

/** The Table 2 row nearest to Δ (ties go to the higher level). */
export function toneFor(delta: number) {
  let best: (typeof TONES)[number] = TONES[0]
  for (const t of TONES) if (Math.abs(t.level - delta) < Math.abs(best.level - delta) - 1e-12) best = t
  return best
}

/**
 * Descending by probability; values within 1e-12 are a tie (so 0.1 + 0.2 and 0.3, the same
 * probability reached by different sums, keep the listed order instead of float noise deciding).
 */
function byProbability(a: number, b: number): number {
  return Math.abs(a - b) <= 1e-12 ? 0 : b - a
}

function sortedDistribution(labels: string[], names: string[], ps: number[]): LabelProb[] {
  return labels
    .map((_, i) => ({ label: names[i] as string, probability: ps[i] as number, i }))
    .sort((x, y) => byProbability(x.probability, y.probability) || x.i - y.i)
    .map(({ label, probability }) => ({ label, probability }))
}

/**
 * The final distribution of Fig. 1 step 3: P_f = (Ω_A·P_A + Ω_B·P_B)/(Ω_A + Ω_B) on the aligned,
 * renormalised lists; equal weights when Ω_A + Ω_B = 0. Sorted by probability (ties: listed order).
 */
export function combineCrit(
  a: readonly LabelProb[],
  b: readonly LabelProb[],
  omegaA: number,
  omegaB: number,
  opts: { aliases?: Aliases } = {},
): LabelProb[] {
  const x = align(a, b, opts)
  const wa = omegaA + omegaB > 0 ? omegaA / (omegaA + omegaB) : 0.5
  return sortedDistribution(
    x.labels,
    x.names,
    x.p.map((p, i) => wa * p + (1 - wa) * (x.q[i] as number)),
  )
}

/**
 * EnToPPS (appendix F): the union of both top-k lists; a label only A lists keeps p_A, only B
 * lists keeps p_B, both list it gets (p_A + p_B)/2; then normalised to sum 1.
 */
export function entopps(
  a: readonly LabelProb[],
  b: readonly LabelProb[],
  opts: { aliases?: Aliases } = {},
): LabelProb[] {
  const x = align(a, b, opts)
  const inA = new Set(a.map((l) => canonicalLabel(l.label, opts.aliases)))
  const inB = new Set(b.map((l) => canonicalLabel(l.label, opts.aliases)))
  const c = x.labels.map((l, i) =>
    inA.has(l) && inB.has(l)
      ? ((x.p[i] as number) + (x.q[i] as number)) / 2
      : inA.has(l)
        ? (x.p[i] as number)
        : (x.q[i] as number),
  )
  const s = c.reduce((t, v) => t + v, 0) || 1
  return sortedDistribution(
    x.labels,
    x.names,
    c.map((v) => v / s),
  )
}

export interface ScoredReason {
  validity: number
  credibility: number
}

/**
 * CRIT's Γ (Chang 2023c, Table 4 step 6 "weighted sum"; the paper gives no weights). Each reason r
 * has validity γ_r and source credibility θ_r on 1–10; its strength is s_r = (γ_r·θ_r)/100 ∈ [0.01, 1].
 * Γ_R = mean of s_r over the supporting reasons (0 without any), Γ_R′ the same over the rival reasons,
 * and Γ = Γ_R·(1 − ½·Γ_R′): strong rival arguments can halve the score, never more. Γ ∈ [0, 1].
 */
export function critScore(reasons: readonly ScoredReason[], rivals: readonly ScoredReason[] = []): number {
  const strength = (r: ScoredReason) =>
    (Math.min(10, Math.max(1, r.validity)) * Math.min(10, Math.max(1, r.credibility))) / 100
  const mean = (rs: readonly ScoredReason[]) => (rs.length ? rs.reduce((s, r) => s + strength(r), 0) / rs.length : 0)
  return mean(reasons) * (1 - 0.5 * mean(rivals))
}

/**
 * The 1-based rank of the ground truth in a distribution, labels canonicalised; ties are broken by
 * listed order (a stable sort by probability, descending). Null if the truth is not listed.
 */
export function rankOf(truth: string, dist: readonly LabelProb[], aliases: Aliases = {}): number | null {
  const t = canonicalLabel(truth, aliases)
  const order = dist
    .map((d, i) => ({ c: canonicalLabel(d.label, aliases), p: d.probability, i }))
    .sort((x, y) => byProbability(x.p, y.p) || x.i - y.i)
  const r = order.findIndex((o) => o.c === t)
  return r < 0 ? null : r + 1
}

/** Wilson score interval (95%) for k successes out of n. */
export function wilson(k: number, n: number, z = 1.959964): [number, number] {
  if (n === 0) return [0, 1]
  const p = k / n
  const den = 1 + (z * z) / n
  const centre = (p + (z * z) / (2 * n)) / den
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / den
  return [Math.max(0, centre - half), Math.min(1, centre + half)]
}

/**
 * Accuracy of final distributions over a case set: top-1, top-k, and the mean reciprocal rank of
 * the ground truth (1/rank when rank ≤ k, else 0; the paper's §4 metric). Wilson 95% intervals
 * for the proportions, mean ± 1.96·sd/√n (clipped to [0, 1]) for MRR.
 */
export function accuracy(
  cases: ReadonlyArray<{ truth: string; final: readonly LabelProb[] }>,
  k: number,
  aliases: Aliases = {},
) {
  const n = cases.length
  let top1 = 0
  let topk = 0
  const rr: number[] = []
  for (const c of cases) {
    const r = rankOf(c.truth, c.final, aliases)
    if (r === 1) top1++
    if (r !== null && r <= k) topk++
    rr.push(r !== null && r <= k ? 1 / r : 0)
  }
  const mrr = n ? rr.reduce((s, x) => s + x, 0) / n : 0
  const sd = n > 1 ? Math.sqrt(rr.reduce((s, x) => s + (x - mrr) ** 2, 0) / (n - 1)) : 0
  const half = n ? (1.959964 * sd) / Math.sqrt(n) : 0
  return {
    n,
    top1: n ? top1 / n : 0,
    topk: n ? topk / n : 0,
    mrr,
    top1Ci: wilson(top1, n),
    topkCi: wilson(topk, n),
    mrrCi: [Math.max(0, mrr - half), Math.min(1, mrr + half)] as [number, number],
  }
}

/**
 * Every pair metric of two aligned, normalised distributions of n labels stored at `offset` in `p`
 * and `q`, written to `out[0..9]` = [H_A, H_B, KL(A‖B), KL(B‖A), H(A,B), H(B,A), JSD, WD, MI, NMI]
 * without allocating (the throughput path of `npm run bench:evince`). Equal to the functions above;
 * it sums MI = Σ J·log(J / (P_A·P_B)) as `mutualInformation` does, with, off the diagonal,
 * log J(x,y) = log r_A(x) + log r_B(y) − log m, so only O(n) logarithms are taken. (Not as
 * H_A + H_B − H(J): that identity needs J's marginals to be P_A and P_B, which fails when a residual
 * m ≤ TINY is dropped, and it cancels catastrophically; CI found NMI 0.965 against 0 that way.)
 */
export function pairMetricsInto(
  p: Float64Array,
  q: Float64Array,
  offset: number,
  n: number,
  epsilon: number,
  out: Float64Array,
  scratch: Float64Array = new Float64Array(4 * n),
): void {
  const z = 1 + n * epsilon
  let hA = 0
  let hB = 0
  let sPlogP = 0
  let sQlogQ = 0
  let sPlogQ = 0
  let sQlogP = 0
  let js = 0
  let tv = 0
  let miDiag = 0
  let m = 0
  // scratch: [0,n) r_A, [n,2n) log r_A − log P_A, [2n,3n) r_B, [3n,4n) log r_B − log P_B
  for (let i = 0; i < n; i++) {
    const x = p[offset + i] as number
    const y = q[offset + i] as number
    const lx = x > 0 ? log2(x) : 0
    const ly = y > 0 ? log2(y) : 0
    hA -= x * lx
    hB -= y * ly
    const xs = (x + epsilon) / z
    const ys = (y + epsilon) / z
    const lxs = log2(xs)
    const lys = log2(ys)
    sPlogP += xs * lxs
    sQlogQ += ys * lys
    sPlogQ += xs * lys
    sQlogP += ys * lxs
    const mid = (x + y) / 2
    if (mid > 0) {
      const lm = log2(mid)
      if (x > 0) js += 0.5 * x * (lx - lm)
      if (y > 0) js += 0.5 * y * (ly - lm)
    }
    tv += Math.abs(x - y)
    const d = Math.min(x, y)
    m += d
    const ra = x - d
    const rb = y - d
    scratch[i] = ra
    scratch[n + i] = ra > 0 ? log2(ra) - lx : 0
    scratch[2 * n + i] = rb
    scratch[3 * n + i] = rb > 0 ? log2(rb) - ly : 0
    // Diagonal J(x,x) = d(x) (r_A·r_B vanishes there: disjoint supports); log(d / (x·y)) = −log of the larger.
    if (d > 0) miDiag -= d * (d === x ? ly : lx)
  }
  m = 1 - m
  // Off the diagonal J(x,y) = r_A(x)·r_B(y)/m, dropped (as in `coupling`) when m ≤ TINY.
  let mi = miDiag
  if (m > TINY) {
    const lm = log2(m)
    for (let x = 0; x < n; x++) {
      const ra = scratch[x] as number
      if (ra <= 0) continue
      const lra = scratch[n + x] as number
      for (let y = 0; y < n; y++) {
        const rb = scratch[2 * n + y] as number
        if (rb <= 0) continue
        const j = (ra * rb) / m
        if (j > 0) mi += j * (lra + (scratch[3 * n + y] as number) - lm)
      }
    }
  }
  mi = Math.max(0, mi)
  const h = Math.max(hA, hB)
  out[0] = hA
  out[1] = hB
  out[2] = Math.max(0, sPlogP - sPlogQ)
  out[3] = Math.max(0, sQlogQ - sQlogP)
  out[4] = -sPlogQ
  out[5] = -sQlogP
  out[6] = Math.min(1, Math.max(0, js))
  out[7] = Math.min(1, tv / 2)
  out[8] = mi
  out[9] = tv / 2 <= TINY ? 1 : h <= TINY ? 0 : Math.min(1, mi / h)
}
