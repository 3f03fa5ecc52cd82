import { describe, expect, it } from 'vitest'
import {
  ALPHA_LEVELS,
  agreementOfConfusion,
  agreementOfLabels,
  bootstrap,
  bootstrapKappa,
  cohenKappa,
  confusion,
  fleissKappa,
  type Id,
  kappaOfConfusion,
  kappaStatistic,
  kendallTauB,
  kendallTauOfRankings,
  krippendorffAlpha,
  mainEffects,
  markBest,
  mulberry32,
  orderByScore,
  pairedTTest,
  pairwiseAccuracy,
  pairwiseKappa,
  perQueryMetrics,
  perRaterAgreement,
  type Rng,
  rbo,
  rboMax,
  rboMin,
  regularizedIncompleteBeta,
  shuffle,
  splitHalfStability,
  studentTCdf,
  studentTUpperTail,
  welchTTest,
} from '@/lib/metrics/agreement'

/** Thomas et al., Table 1 (`-DNA-` vs TREC, 2,951 parsed labels; §B.5.1 of the reference). */
const TABLE1 = { model0_gold0: 866, model0_gold1: 405, model1_gold0: 95, model1_gold1: 1585 }

/** Label lists that produce a given 2×2 table (gold first). */
function labelsOf(c: typeof TABLE1): { gold: number[]; model: number[] } {
  const gold: number[] = []
  const model: number[] = []
  const put = (n: number, g: number, m: number) => {
    for (let i = 0; i < n; i++) {
      gold.push(g)
      model.push(m)
    }
  }
  put(c.model0_gold0, 0, 0)
  put(c.model0_gold1, 1, 0)
  put(c.model1_gold0, 0, 1)
  put(c.model1_gold1, 1, 1)
  return { gold, model }
}

const int = (rng: Rng, n: number) => Math.floor(rng() * n)

describe('two raters', () => {
  it("reproduces the paper's Table 1: κ 0.644, MAE 0.169, accuracy 0.831, P(agree|0) 0.681, P(agree|1) 0.943", () => {
    const r = agreementOfConfusion(TABLE1)
    expect(r.n).toBe(2951)
    expect(r.kappa!).toBeCloseTo(0.644, 3)
    expect(Math.abs(r.kappa! - 0.644)).toBeLessThanOrEqual(0.0005)
    expect(r.maeBinary!).toBeCloseTo(0.169, 3)
    expect(r.accuracy!).toBeCloseTo(0.831, 3)
    expect(r.pAgreeModel0!).toBeCloseTo(0.681, 3)
    expect(r.pAgreeModel1!).toBeCloseTo(0.943, 3)
    // the same from the labels themselves (gold 1 and 2 both binarise to 1)
    const { gold, model } = labelsOf(TABLE1)
    const graded = gold.map((g, i) => (g === 1 && i % 2 ? 2 : g))
    const l = agreementOfLabels(graded, model)
    expect(l.confusion).toEqual(TABLE1)
    expect(l.kappa).toBe(r.kappa)
    expect(l.maeBinary).toBe(r.maeBinary)
    // graded MAE counts a 2-vs-0 miss twice
    let abs = 0
    for (let i = 0; i < gold.length; i++) abs += Math.abs(graded[i]! - model[i]!)
    expect(l.maeGraded).toBeCloseTo(abs / gold.length, 12)
    expect(l.maeGraded!).toBeGreaterThan(l.maeBinary!)
  })

  it('binarises at 1 and keeps the four keys', () => {
    expect(confusion([0, 1, 2, 0.5, 1.5], [2, 0, 1, 1, 0.4])).toEqual({
      model0_gold0: 0,
      model0_gold1: 2,
      model1_gold0: 2,
      model1_gold1: 1,
    })
    expect(() => confusion([0], [0, 1])).toThrow(RangeError)
  })

  it('κ is null (not NaN) when p_e = 1, and the conditional agreements when undefined', () => {
    const r = agreementOfLabels([1, 1, 2], [1, 2, 1])
    expect(r.kappa).toBeNull()
    expect(r.accuracy).toBe(1)
    expect(r.pAgreeModel0).toBeNull()
    expect(r.pAgreeModel1).toBe(1)
    expect(agreementOfLabels([], []).kappa).toBeNull()
    expect(cohenKappa(['a', 'a'], ['a', 'a'])).toBeNull()
  })

  it("Cohen's κ for nominal categories equals the 2×2 κ on two categories, and a textbook 3×3 value", () => {
    const { gold, model } = labelsOf(TABLE1)
    expect(cohenKappa(gold, model)).toBeCloseTo(kappaOfConfusion(TABLE1)!, 12)
    // 3×3 table (rows rater A, columns rater B): [[20, 5, 0], [3, 30, 2], [1, 4, 35]], n = 100.
    // p_o = 0.85; marginals A (25, 35, 40), B (24, 39, 37): p_e = (25·24 + 35·39 + 40·37)/100² = 0.3445
    const table = [
      [20, 5, 0],
      [3, 30, 2],
      [1, 4, 35],
    ]
    const a: string[] = []
    const b: string[] = []
    for (const [i, row] of table.entries())
      for (const [j, n] of row.entries())
        for (let k = 0; k < n; k++) {
          a.push(`c${i}`)
          b.push(`c${j}`)
        }
    expect(cohenKappa(a, b)).toBeCloseTo((0.85 - 0.3445) / (1 - 0.3445), 12)
  })

  it('property: κ ≤ 1 and κ = 1 for identical non-constant labels (200 seeded cases)', () => {
    const rng = mulberry32(11)
    for (let c = 0; c < 200; c++) {
      const n = 2 + int(rng, 60)
      const a = Array.from({ length: n }, () => int(rng, 3))
      const b = a.map((x) => (rng() < 0.3 ? int(rng, 3) : x))
      const k = cohenKappa(a, b)
      if (k !== null) expect(k).toBeLessThanOrEqual(1 + 1e-12)
      const kb = agreementOfLabels(a, b).kappa
      if (kb !== null) expect(kb).toBeLessThanOrEqual(1 + 1e-12)
      if (new Set(a).size > 1) expect(cohenKappa(a, a)).toBeCloseTo(1, 12)
    }
  })
})

describe('many raters', () => {
  it("Fleiss' κ: Fleiss (1971)'s worked example as on Wikipedia's \"Fleiss' kappa\" page (κ 0.210, P̄ 0.378, P̄e 0.213)", () => {
    // 10 subjects, 14 raters, 5 categories: counts[i][j] = raters who put subject i in category j.
    const counts = [
      [0, 0, 0, 0, 14],
      [0, 2, 6, 4, 2],
      [0, 0, 3, 5, 6],
      [0, 3, 9, 2, 0],
      [2, 2, 8, 1, 1],
      [7, 7, 0, 0, 0],
      [3, 2, 6, 3, 0],
      [2, 5, 3, 2, 2],
      [6, 5, 2, 1, 0],
      [0, 2, 2, 3, 7],
    ]
    const r = fleissKappa(counts)
    expect(r.fleissKappa!).toBeCloseTo(0.21, 3)
    expect(r.pBar).toBeCloseTo(0.378, 3)
    expect(r.pExpected).toBeCloseTo(0.213, 3)
    expect(() => fleissKappa([[1, 1], [3]])).toThrow(RangeError)
    expect(() =>
      fleissKappa([
        [2, 0],
        [1, 2],
      ]),
    ).toThrow(/3 ratings/)
    expect(
      fleissKappa([
        [3, 0],
        [3, 0],
      ]).fleissKappa,
    ).toBeNull()
  })

  /**
   * Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with 4 observers,
   * 12 units and missing values (also R irr's kripp.alpha example matrix `nmm`): nominal α = 0.743,
   * ordinal 0.815, interval 0.849, ratio 0.797. Rows are units, columns the observers A–D.
   */
  const KRIPP_UNITS: (number | null)[][] = [
    [1, 1, null, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [null, 5, 5, 5],
    [null, null, 1, 1],
    [null, null, 3, null],
  ]
  it.each([
    ['nominal', 0.743],
    ['ordinal', 0.815],
    ['interval', 0.849],
    ['ratio', 0.797],
  ] as const)("Krippendorff's α, %s: %f on Krippendorff's (2011) worked example", (level, expected) => {
    const r = krippendorffAlpha(KRIPP_UNITS, level)
    expect(r.level).toBe(level)
    expect(r.pairable).toBe(40) // the lone value of the last unit is not pairable
    expect(Math.abs(r.alpha! - expected)).toBeLessThan(0.0005)
  })

  it("Krippendorff's nominal α on two raters without missing values is near Cohen's κ (α ≤ κ here), and null with no variation", () => {
    const { gold, model } = labelsOf(TABLE1)
    const units = gold.map((g, i) => [g, model[i]!])
    const alpha = krippendorffAlpha(units, 'nominal').alpha!
    expect(alpha).toBeGreaterThan(0.6)
    expect(alpha).toBeLessThanOrEqual(kappaOfConfusion(TABLE1)! + 1e-12)
    expect(
      krippendorffAlpha(
        [
          [1, 1],
          [1, 1],
        ],
        'interval',
      ).alpha,
    ).toBeNull()
    expect(
      krippendorffAlpha(
        [
          [1, null],
          [null, 2],
        ],
        'nominal',
      ),
    ).toEqual({ alpha: null, level: 'nominal', pairable: 0 })
  })

  it('property: α = 1 for identical raters at every level (200 seeded cases, with missing values)', () => {
    const rng = mulberry32(5)
    for (let c = 0; c < 200; c++) {
      const raters = 2 + int(rng, 4)
      const units = Array.from({ length: 3 + int(rng, 30) }, () => {
        const v = 1 + int(rng, 5)
        return Array.from({ length: raters }, (_, r) => (r > 1 && rng() < 0.3 ? null : v))
      })
      if (new Set(units.map((u) => u[0])).size < 2) continue
      for (const level of ALPHA_LEVELS) expect(krippendorffAlpha(units, level).alpha).toBeCloseTo(1, 12)
    }
  })

  it('pairwise κ matrix over the items both labelled, and each rater against the leave-one-out majority', () => {
    // raters 0 and 1 agree everywhere; rater 2 is the opposite of them; rater 3 labels half the items.
    const items = 40
    const rng = mulberry32(3)
    const truth = Array.from({ length: items }, () => int(rng, 2))
    const table = truth.map((t, i) => [t, t, 1 - t, i % 2 ? t : null])
    const pw = pairwiseKappa(table)
    expect(pw.n[0]![1]).toBe(items)
    expect(pw.n[0]![3]).toBe(items / 2)
    expect(pw.kappa[0]![1]).toBeCloseTo(1, 12)
    expect(pw.kappa[0]![2]).toBeCloseTo(
      cohenKappa(
        truth,
        truth.map((t) => 1 - t),
      )!,
      12,
    )
    expect(pw.kappa[0]![2]!).toBeLessThan(0)
    expect(pw.kappa[3]![0]).toBe(pw.kappa[0]![3])
    const per = perRaterAgreement(table)
    expect(per).toHaveLength(4)
    // rater 0: others on the odd items are (t, 1−t, t): majority t; on even items (t, 1−t): tie, left out
    expect(per[0]!.n).toBe(items / 2)
    expect(per[0]!.kappaVsMajority).toBeCloseTo(1, 12)
    expect(per[2]!.kappaVsMajority!).toBeLessThan(0)
    expect(per[0]!.meanPairwiseKappa).toBeCloseTo((1 + pw.kappa[0]![2]! + pw.kappa[0]![3]!) / 3, 12)
  })
})

/** Pairwise accuracy by enumerating every pair (the definition), to check the rank computation. */
function bruteAuc(gold: number[], score: number[], topics?: string[]) {
  let pairs = 0
  let conc = 0
  for (let i = 0; i < gold.length; i++)
    for (let j = 0; j < gold.length; j++) {
      if (!(gold[i]! > gold[j]!)) continue
      if (topics && topics[i] !== topics[j]) continue
      pairs++
      if (score[i]! > score[j]!) conc++
      else if (score[i] === score[j]) conc += 0.5
    }
  return { pairs, conc }
}

describe('document preference (AUC)', () => {
  it('agrees with enumerating the pairs, across and within topics, with graded gold and tied scores', () => {
    const rng = mulberry32(17)
    for (let c = 0; c < 200; c++) {
      const n = 2 + int(rng, 50)
      const gold = Array.from({ length: n }, () => int(rng, 3))
      const score = Array.from({ length: n }, () => int(rng, 5) / 2) // many ties
      const topics = Array.from({ length: n }, () => `q${int(rng, 4)}`)
      const across = pairwiseAccuracy(gold, score)
      const b = bruteAuc(gold, score)
      expect(across.pairs).toBe(b.pairs)
      expect(across.concordant).toBe(b.conc)
      const within = pairwiseAccuracy(gold, score, topics)
      const bw = bruteAuc(gold, score, topics)
      expect(within.pairs).toBe(bw.pairs)
      expect(within.concordant).toBe(bw.conc)
      // property: a reversed scorer gives 1 − AUC
      const rev = pairwiseAccuracy(
        gold,
        score.map((s) => -s),
      )
      if (across.auc !== null) expect(rev.auc!).toBeCloseTo(1 - across.auc, 12)
    }
  })

  it('is 1 for a perfect scorer, 0.5 for a constant one, null without a gold difference', () => {
    expect(pairwiseAccuracy([0, 1, 2, 2], [0.1, 0.5, 0.9, 0.8]).auc).toBe(1)
    expect(pairwiseAccuracy([0, 1, 2], [1, 1, 1]).auc).toBe(0.5)
    expect(pairwiseAccuracy([1, 1], [0, 1])).toEqual({ auc: null, pairs: 0, concordant: 0 })
    // across topics a pair may join two topics; within topics it may not
    expect(pairwiseAccuracy([1, 0], [1, 0], ['a', 'b']).auc).toBeNull()
    expect(pairwiseAccuracy([1, 0], [1, 0]).auc).toBe(1)
  })
})

/** Truncated RBO from its definition: (1 − φ)·Σ φ^{d−1}·|S_{:d} ∩ T_{:d}|/d. */
function bruteRbo(a: Id[], b: Id[], phi: number) {
  let s = 0
  for (let d = 1; d <= Math.min(a.length, b.length); d++) {
    const A = new Set(a.slice(0, d))
    const overlap = b.slice(0, d).filter((x) => A.has(x)).length
    s += phi ** (d - 1) * (overlap / d)
  }
  return (1 - phi) * s
}

const permutation = (n: number, rng: Rng) =>
  shuffle(
    Array.from({ length: n }, (_, i) => i),
    rng,
  )

describe('orderings: RBO and Kendall τ', () => {
  it('RBO_min is the RBO of the reversed list, and the maximum 1 − φ^N that of the list itself', () => {
    for (const N of [1, 2, 3, 7, 14, 50, 110, 250])
      for (const phi of [0.5, 0.7, 0.9, 0.98]) {
        const list = Array.from({ length: N }, (_, i) => `d${i}`)
        const rev = rbo(list, [...list].reverse(), phi)
        expect(rev.trunc).toBeCloseTo(bruteRbo(list, [...list].reverse(), phi), 12)
        expect(rboMin(N, phi)).toBeCloseTo(rev.trunc, 12)
        const same = rbo(list, list, phi)
        expect(same.trunc).toBeCloseTo(1 - phi ** N, 12)
        expect(rboMax(N, phi)).toBe(1 - phi ** N)
        expect(same.ext).toBeCloseTo(1, 12)
        if (N >= 2) {
          expect(same.norm).toBe(1)
          expect(rev.norm).toBeCloseTo(0, 12)
        } else expect(same.norm).toBeNull()
      }
  })

  it("random permutations: mean normalised RBO ≈ the paper's random row (Table 4: 0.04, 0.03, 0.21)", () => {
    const rng = mulberry32(2024)
    for (const [N, phi, expected] of [
      [250, 0.9, 0.04],
      [110, 0.7, 0.03],
      [14, 0.7, 0.2],
    ] as const) {
      const base = Array.from({ length: N }, (_, i) => i)
      let sum = 0
      const runs = 400
      for (let r = 0; r < runs; r++) sum += rbo(base, permutation(N, rng), phi).norm!
      expect(Math.abs(sum / runs - expected), `N=${N} φ=${phi}`).toBeLessThanOrEqual(0.02)
    }
  })

  it('property: normalised RBO lies in [0, 1] and is 1 only for equal rankings; truncated RBO matches its definition', () => {
    const rng = mulberry32(99)
    for (let c = 0; c < 200; c++) {
      const N = 2 + int(rng, 40)
      const phi = [0.5, 0.7, 0.9][int(rng, 3)]!
      const a = permutation(N, rng)
      const b = rng() < 0.2 ? [...a] : permutation(N, rng)
      const r = rbo(a, b, phi)
      expect(r.trunc).toBeCloseTo(bruteRbo(a, b, phi), 12)
      expect(r.norm!).toBeGreaterThanOrEqual(0)
      expect(r.norm!).toBeLessThanOrEqual(1)
      const equal = a.every((x, i) => x === b[i])
      expect(r.norm === 1).toBe(equal)
      // RBO_ext = trunc + A_k·φ^k (every id shared at depth k: A_k = 1)
      expect(r.ext).toBeCloseTo(r.trunc + phi ** N, 12)
    }
  })

  it('rankings of different sets: no normalised value; duplicates refused', () => {
    const r = rbo(['a', 'b', 'c'], ['a', 'x', 'y'], 0.9)
    expect(r.norm).toBeNull()
    expect(r.trunc).toBeCloseTo(bruteRbo(['a', 'b', 'c'], ['a', 'x', 'y'], 0.9), 12)
    // ext: X_d = 1, 1, 1 → (1/3)·0.9³ + (0.1/0.9)·(0.9 + 0.81/2 + 0.729/3)
    expect(r.ext).toBeCloseTo(0.729 / 3 + (0.1 / 0.9) * (0.9 + 0.405 + 0.243), 12)
    expect(() => rbo(['a', 'a'], ['a', 'b'], 0.9)).toThrow(/twice/)
    expect(() => rbo(['a'], ['a'], 1)).toThrow(RangeError)
  })

  /** τ-b from its definition (every pair), the reference for Knight's algorithm. */
  function bruteTauB(x: number[], y: number[]) {
    let s = 0
    let tx = 0
    let ty = 0
    let n0 = 0
    for (let i = 0; i < x.length; i++)
      for (let j = i + 1; j < x.length; j++) {
        n0++
        const dx = Math.sign(x[i]! - x[j]!)
        const dy = Math.sign(y[i]! - y[j]!)
        s += dx * dy
        if (dx === 0) tx++
        if (dy === 0) ty++
      }
    return s / Math.sqrt((n0 - tx) * (n0 - ty))
  }

  it("Kendall's τ-b: Knight's algorithm equals the pair count, with ties; self = 1, reversed = −1 (200 cases)", () => {
    const rng = mulberry32(8)
    for (let c = 0; c < 200; c++) {
      const n = 2 + int(rng, 60)
      const x = Array.from({ length: n }, () => int(rng, 6))
      const y = Array.from({ length: n }, () => int(rng, 6))
      const t = kendallTauB(x, y)
      if (new Set(x).size > 1 && new Set(y).size > 1) expect(t!).toBeCloseTo(bruteTauB(x, y), 12)
      else expect(t).toBeNull()
      const ranking = permutation(n, rng).map((i) => `r${i}`)
      expect(kendallTauOfRankings(ranking, ranking).tau).toBeCloseTo(1, 12)
      expect(kendallTauOfRankings(ranking, [...ranking].reverse()).tau).toBeCloseTo(-1, 12)
    }
    // a hand-worked case: x (1,2,2,3,4), y (1,3,2,2,5): of the 10 pairs 7 concordant, 1 discordant,
    // one tied in x only, one in y only: τ_b = (7 − 1)/√((10 − 1)(10 − 1))
    expect(kendallTauB([1, 2, 2, 3, 4], [1, 3, 2, 2, 5])).toBeCloseTo(6 / 9, 12)
  })

  it('orders ids by score, ties by id', () => {
    expect(orderByScore({ q3: 0.2, q1: 0.5, q2: 0.2 }, 'asc')).toEqual(['q2', 'q3', 'q1'])
    expect(
      orderByScore(
        new Map<Id, number>([
          ['r1', 1],
          ['r2', 3],
          ['r0', 1],
        ]),
        'desc',
      ),
    ).toEqual(['r2', 'r0', 'r1'])
  })
})

describe('per-query IR metrics', () => {
  it('P@10, RBP@100 (φ 0.6) and AP@100 with unjudged = not relevant and R = relevant judged documents', () => {
    const run = {
      q1: ['d1', 'd2', 'd3', 'd4', 'unjudged'],
      q2: ['x', 'y'],
      q3: Array.from({ length: 120 }, (_, i) => `e${i}`),
    }
    const qrels = {
      q1: { d1: 2, d2: 0, d3: 1, d9: 1 }, // d9 is relevant but not retrieved
      q2: { x: 0, y: 0 },
      q3: Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`e${i}`, 1])),
    }
    const m = perQueryMetrics(run, qrels)
    expect(m.q1!.p10).toBeCloseTo(0.2, 12)
    expect(m.q1!.rbp100).toBeCloseTo(0.4 * (1 + 0.6 ** 2), 12)
    expect(m.q1!.ap100).toBeCloseTo((1 / 1 + 2 / 3) / 3, 12)
    expect(m.q2).toEqual({ p10: 0, rbp100: 0, ap100: 0 })
    // depth 100: 100 relevant of R = 120
    expect(m.q3!.p10).toBe(1)
    expect(m.q3!.rbp100).toBeCloseTo(1 - 0.6 ** 100, 12)
    expect(m.q3!.ap100).toBeCloseTo(100 / 120, 12)
  })
})

describe('uncertainty', () => {
  it('the Student t tail from the incomplete beta matches the t table', () => {
    expect(studentTUpperTail(1.812, 10)).toBeCloseTo(0.05, 4)
    expect(studentTUpperTail(2.086, 20)).toBeCloseTo(0.025, 4)
    expect(studentTUpperTail(2.228, 10)).toBeCloseTo(0.025, 4)
    expect(studentTUpperTail(12.706, 1)).toBeCloseTo(0.025, 4)
    expect(studentTUpperTail(1.96, 1e6)).toBeCloseTo(0.025, 4)
    expect(studentTUpperTail(0, 7)).toBeCloseTo(0.5, 12)
    expect(studentTCdf(-1.812, 10)).toBeCloseTo(0.05, 4)
    // I_x(1, 1) = x, I_x(a, 1) = x^a
    expect(regularizedIncompleteBeta(0.3, 1, 1)).toBeCloseTo(0.3, 12)
    expect(regularizedIncompleteBeta(0.3, 2.5, 1)).toBeCloseTo(0.3 ** 2.5, 12)
  })

  it('one-sided t-tests: Welch and paired, and the † of the best variant', () => {
    // Welch on a = (1..5), b = (0..4): means 3 and 2, both variance 2.5, n 5: t = 1/√(0.5 + 0.5) = 1,
    // ν = 1² / (0.5²/4 + 0.5²/4) = 8
    const w = welchTTest([1, 2, 3, 4, 5], [0, 1, 2, 3, 4])
    expect(w.t).toBeCloseTo(1, 12)
    expect(w.df).toBeCloseTo(8, 12)
    expect(w.p).toBeCloseTo(studentTUpperTail(1, 8), 12)
    // paired: d = (1, 1, 2, 0) → d̄ = 1, s_d² = 2/3, t = 1/√(2/3/4) = √6, ν = 3
    const p = pairedTTest([3, 4, 6, 5], [2, 3, 4, 5])
    expect(p.t).toBeCloseTo(Math.sqrt(6), 12)
    expect(p.df).toBe(3)
    const mark = markBest([
      { id: 'low', samples: [0.3, 0.31, 0.29, 0.3] },
      { id: 'best', samples: [0.64, 0.65, 0.63, 0.66] },
      { id: 'next', samples: [0.6, 0.61, 0.6, 0.62] },
    ])
    expect(mark.best).toBe('best')
    expect(mark.nextBest).toBe('next')
    expect(mark.significant).toBe(true)
    const mae = markBest(
      [
        { id: 'a', samples: [0.17, 0.18, 0.16] },
        { id: 'b', samples: [0.17, 0.17, 0.18] },
      ],
      { higherIsBetter: false },
    )
    expect(mae.best).toBe('a')
    expect(mae.significant).toBe(false)
  })

  it('bootstrap: deterministic for a seed, different for another; the interval holds the estimate', () => {
    const { gold, model } = labelsOf(TABLE1)
    const stat = (idx: Uint32Array) => kappaStatistic(model, gold, idx)
    const a = bootstrap(gold.length, stat, { seed: 42 })
    const b = bootstrap(gold.length, stat, { seed: 42 })
    const c = bootstrap(gold.length, stat, { seed: 43 })
    expect(a.resamples).toBe(20)
    expect([...a.samples]).toEqual([...b.samples])
    expect([...a.samples]).not.toEqual([...c.samples])
    expect(a.estimate).toBeCloseTo(kappaOfConfusion(TABLE1)!, 12)
    expect(a.lo!).toBeLessThanOrEqual(a.estimate!)
    expect(a.hi!).toBeGreaterThanOrEqual(a.estimate!)
    expect(a.hi! - a.lo!).toBeLessThan(0.1)
    // the typed-array κ bootstrap draws the same indices from the same seed, so gives the same samples
    const k = bootstrapKappa(gold, model, { seed: 42 })
    expect([...k.samples].map((v) => v.toFixed(12))).toEqual([...a.samples].map((v) => v.toFixed(12)))
    expect(k.lo).toBeCloseTo(a.lo!, 12)
  })

  it('the κ bootstrap is O(n·B) on typed arrays (1,000 resamples of 3,000 items; timed by the bench)', () => {
    const rng = mulberry32(1)
    const gold = Array.from({ length: 3000 }, () => int(rng, 3))
    const model = gold.map((g) => (rng() < 0.2 ? int(rng, 3) : g))
    const r = bootstrapKappa(gold, model, { resamples: 1000, seed: 7 })
    expect(r.samples).toHaveLength(1000)
    expect(r.samples.every((v) => v > 0 && v < 1)).toBe(true)
    expect(r.lo!).toBeLessThan(r.estimate!)
    expect(r.hi!).toBeGreaterThan(r.estimate!)
  })
})

describe('prompt lab', () => {
  it('main effects of a 2^5 factorial recover additive effects exactly', () => {
    const beta = { R: -0.04, D: 0.01, N: 0.06, A: 0.21, M: -0.13 }
    const names = Object.keys(beta) as (keyof typeof beta)[]
    const rows = Array.from({ length: 32 }, (_, mask) => {
      const features = Object.fromEntries(names.map((f, i) => [f, Boolean(mask & (1 << i))]))
      const value = 0.4 + names.reduce((s, f) => s + (features[f] ? beta[f] : 0), 0)
      return { features, value }
    })
    const eff = mainEffects(rows)
    for (const f of names) {
      expect(eff[f]!.effect!).toBeCloseTo(beta[f], 12)
      expect(eff[f]!.nOn).toBe(16)
    }
    expect(() =>
      mainEffects([
        { features: { A: true }, value: 1 },
        { features: { B: true }, value: 1 },
      ]),
    ).toThrow(RangeError)
  })

  it('split-half stability: a clearly better variant is chosen and beats the baseline; seeded', () => {
    const rng = mulberry32(21)
    const n = 600
    const gold = Array.from({ length: n }, () => int(rng, 3))
    const noisy = (p: number) => gold.map((g) => (rng() < p ? int(rng, 3) : g))
    const variants = { baseline: noisy(0.6), good: noisy(0.15), fair: noisy(0.35) }
    const input = { variants, gold, baseline: 'baseline', statistic: kappaStatistic, iterations: 200, seed: 4 }
    const r = splitHalfStability(input)
    expect(r.iterations).toBe(200)
    expect(r.chosen.good).toBe(200)
    expect(r.winsOverBaseline).toBe(200)
    expect(r.chosen.baseline! + r.chosen.fair! + r.chosen.good!).toBe(200)
    expect(splitHalfStability(input)).toEqual(r)
    // two nearly equal variants: each is chosen some of the time
    const close = splitHalfStability({
      ...input,
      variants: { baseline: variants.baseline, a: noisy(0.3), b: noisy(0.3) },
    })
    expect(close.chosen.a!).toBeGreaterThan(0)
    expect(close.chosen.b!).toBeGreaterThan(0)
    expect(close.chosen.baseline).toBe(0)
  })
})
