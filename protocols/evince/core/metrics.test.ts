import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  accuracy,
  align,
  canonicalLabel,
  combineCrit,
  contentiousness,
  coupling,
  critScore,
  crossEntropy,
  debateMetrics,
  debateFileSchema,
  entopps,
  entropy,
  jsd,
  kl,
  MetricsInputError,
  mutualInformation,
  normalizedMI,
  pairMetricsInto,
  rankOf,
  roundMetrics,
  smooth,
  toneFor,
  wasserstein01,
  wassersteinOrdinal,
  wilson,
} from './metrics'

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../tests/fixtures/${name}.json`, import.meta.url), 'utf8'))

describe('hand-computed values', () => {
  it('identical distributions: no divergence, MI = H, NMI = 1', () => {
    const p = [0.5, 0.5]
    expect(entropy(p)).toBeCloseTo(1, 12)
    expect(kl(p, p)).toBeCloseTo(0, 12)
    // Smoothing a uniform distribution leaves it uniform: H(P′, P′) = 1 bit.
    expect(crossEntropy(p, p)).toBeCloseTo(1, 12)
    expect(jsd(p, p)).toBe(0)
    expect(wasserstein01(p, p)).toBe(0)
    // d = [.5, .5], m = 0: J = diag(.5, .5); MI = 2 · .5·log2(.5 / .25) = 1.
    expect(mutualInformation(p, p)).toBeCloseTo(1, 12)
    expect(normalizedMI(p, p)).toBe(1)
  })

  it('disjoint supports: JSD = WD = 1, MI = NMI = 0, KL finite through smoothing', () => {
    const p = [1, 0]
    const q = [0, 1]
    // M = [.5, .5]: ½·1·log2(1/.5) + ½·1·log2(1/.5) = 1.
    expect(jsd(p, q)).toBeCloseTo(1, 12)
    expect(wasserstein01(p, q)).toBe(1)
    // d = 0, m = 1, J(0,1) = 1·1/1 = 1: MI = 1·log2(1 / (1·1)) = 0.
    expect(mutualInformation(p, q)).toBe(0)
    expect(normalizedMI(p, q)).toBe(0)
    // p′ = [1.001, .001]/1.002, q′ = [.001, 1.001]/1.002:
    // KL = (1.001 − .001)/1.002 · log2(1001) = log2(1001)/1.002 ≈ 9.94733.
    expect(kl(p, q)).toBeCloseTo(Math.log2(1001) / 1.002, 10)
    expect(kl(p, q)).toBeCloseTo(9.94733, 4)
    // H(P′, Q′) = −(1.001 log2(.001/1.002) + .001 log2(1.001/1.002)) / 1.002.
    expect(crossEntropy(p, q)).toBeCloseTo(
      -(1.001 * Math.log2(0.001 / 1.002) + 0.001 * Math.log2(1.001 / 1.002)) / 1.002,
      10,
    )
  })

  it('zero probabilities inside the union', () => {
    const p = [0.5, 0.5, 0]
    const q = [0.5, 0, 0.5]
    expect(entropy(p)).toBeCloseTo(1, 12)
    // M = [.5, .25, .25]; KL(P‖M) = .5·log2(.5/.25) = .5, the same for Q: JSD = .5.
    expect(jsd(p, q)).toBeCloseTo(0.5, 12)
    // ½(0 + .5 + .5) = .5.
    expect(wasserstein01(p, q)).toBeCloseTo(0.5, 12)
    // d = [.5, 0, 0], m = .5, r_A = [0, .5, 0], r_B = [0, 0, .5]: J(0,0) = .5, J(1,2) = .5·.5/.5 = .5.
    expect(coupling(p, q)).toEqual([
      [0.5, 0, 0],
      [0, 0, 0.5],
      [0, 0, 0],
    ])
    // MI = .5·log2(.5/.25) + .5·log2(.5/.25) = 1: the coupling pairs the leftovers deterministically.
    expect(mutualInformation(p, q)).toBeCloseTo(1, 12)
    expect(normalizedMI(p, q)).toBeCloseTo(1, 12)
  })

  it("Gemini's Dengue round 1 sums to 0.95: renormalised, with a warning", () => {
    const { rounds } = fixture('dengue')
    const a = align(rounds[0].A, rounds[0].B)
    expect(a.rawSumB).toBeCloseTo(0.95, 12)
    expect(a.q.slice(3)).toEqual([0.6 / 0.95, 0.2 / 0.95, 0.15 / 0.95].map((x) => expect.closeTo(x, 12)))
    expect(a.warnings.join(' ')).toMatch(/B's probabilities sum to 0\.95/)
    const m = roundMetrics(rounds[0].A, rounds[0].B)
    // H(A) = −(.6 log2 .6 + .25 log2 .25 + .15 log2 .15) = .44218 + .5 + .41054 = 1.35272.
    expect(m.entropyA).toBeCloseTo(1.35272, 5)
    expect(m.entropyB).toBeCloseTo(-[0.6, 0.2, 0.15].reduce((s, x) => s + (x / 0.95) * Math.log2(x / 0.95), 0), 12)
    // No label in common.
    expect([m.jsd, m.wd, m.mi, m.nmi]).toEqual([1, 1, 0, 0])
  })

  it('Jaundice: the smoothed KL both ways as the reference note gives them (1.4632, 1.4668), swapped in round 2', () => {
    const { rounds } = fixture('jaundice')
    const r1 = roundMetrics(rounds[0].A, rounds[0].B)
    const r2 = roundMetrics(rounds[1].A, rounds[1].B)
    expect(r1.labels).toEqual([
      'Hepatitis C',
      'Hepatitis B',
      'Cirrhosis',
      'Obstructive Jaundice',
      'Acute Liver Failure',
      'Alcoholic Hepatitis',
      'Hepatitis A',
    ])
    expect(r1.klAB).toBeCloseTo(1.4632, 4)
    expect(r1.klBA).toBeCloseTo(1.4668, 4)
    expect(r2.klAB).toBeCloseTo(1.4668, 4)
    expect(r2.klBA).toBeCloseTo(1.4632, 4)
    // |A − B| over the union: .15 + .05 + .15 + .10 + .05 + .15 + .05 = .70, so WD = .35.
    expect(r1.wd).toBeCloseTo(0.35, 12)
    // The swap leaves every symmetric metric unchanged and swaps the entropies.
    for (const k of ['jsd', 'wd', 'mi', 'nmi'] as const) expect(r2[k]).toBeCloseTo(r1[k], 12)
    expect(r2.entropyA).toBeCloseTo(r1.entropyB, 12)
    expect(r2.crossEntropyAB).toBeCloseTo(r1.crossEntropyBA, 12)
    // Round 3 is close: |diff| = .05 (Hep B) + .05 (OJ) = .1, WD = .05; agreement rises.
    const r3 = roundMetrics(rounds[2].A, rounds[2].B)
    expect(r3.wd).toBeCloseTo(0.05, 12)
    expect(r3.nmi).toBeGreaterThan(r1.nmi)
  })

  it('Dengue round 3: identical lists, WD = JSD = 0, NMI = 1', () => {
    const { rounds } = fixture('dengue')
    const m = roundMetrics(rounds[2].A, rounds[2].B)
    expect([m.wd, m.jsd, m.nmi]).toEqual([0, 0, 1])
    expect(m.mi).toBeCloseTo(m.entropyA, 12)
  })

  it('ordinal W1 over a declared order, normalised by n − 1', () => {
    // CDF_P = [1, 1], CDF_Q = [0, 0] over three positions: Σ = 1 + 1 = 2, / 2 = 1.
    expect(wassersteinOrdinal([1, 0, 0], [0, 0, 1])).toBe(1)
    // Neighbours: |1 − 0| + |1 − 1| = 1, / 2 = .5.
    expect(wassersteinOrdinal([1, 0, 0], [0, 1, 0])).toBe(0.5)
    const m = roundMetrics([{ label: 'mild', probability: 1 }], [{ label: 'severe', probability: 1 }], {
      order: ['mild', 'moderate', 'severe'],
    })
    expect(m.wdOrdinal).toBe(1)
    expect(() =>
      roundMetrics([{ label: 'x', probability: 1 }], [{ label: 'y', probability: 1 }], { order: ['x'] }),
    ).toThrow(/missing from the declared order: y/)
  })
})

describe('alignment and labels', () => {
  it('canonicalises parentheticals, case, whitespace and aliases (transitively, cycle-safe)', () => {
    expect(canonicalLabel('  Hepatitis C (HCV) ')).toBe('hepatitis c')
    expect(canonicalLabel('Obstructive  Jaundice [biliary]')).toBe('obstructive jaundice')
    const aliases = { HCV: 'Hepatitis C', 'Obstructive Jaundice': 'Jaundice', Jaundice: 'Icterus', Icterus: 'Jaundice' }
    expect(canonicalLabel('hcv', aliases)).toBe('hepatitis c')
    expect(canonicalLabel('Obstructive Jaundice (due to gallstones)', aliases)).toBe('icterus')
  })

  it('sums duplicate labels with a warning and refuses bad input', () => {
    const a = align(
      [
        { label: 'Flu', probability: 0.3 },
        { label: 'flu (influenza)', probability: 0.2 },
        { label: 'Cold', probability: 0.5 },
      ],
      [{ label: 'Cold', probability: 1 }],
    )
    expect(a.p).toEqual([0.5, 0.5])
    expect(a.warnings[0]).toMatch(/more than once/)
    expect(() => align([], [{ label: 'x', probability: 1 }])).toThrow(MetricsInputError)
    expect(() => align([{ label: 'x', probability: -0.1 }], [{ label: 'x', probability: 1 }])).toThrow(/non-negative/)
    expect(() => align([{ label: 'x', probability: 0 }], [{ label: 'x', probability: 1 }])).toThrow(/sum to 0/)
    expect(() => align([{ label: 'x', probability: Number.NaN }], [{ label: 'x', probability: 1 }])).toThrow(
      MetricsInputError,
    )
  })

  it('percentages are renormalised like any other list, with a warning', () => {
    const a = align(
      [
        { label: 'x', probability: 60 },
        { label: 'y', probability: 40 },
      ],
      [{ label: 'x', probability: 1 }],
    )
    expect(a.p).toEqual([0.6, 0.4])
    expect(a.warnings[0]).toMatch(/sum to 100/)
  })
})

describe('schedule, tone, combination, CRIT, accuracy', () => {
  it('contentiousness: 0.9, 0.9, then ×0.75 per round', () => {
    expect([1, 2, 3, 4, 5].map((r) => contentiousness(r))).toEqual(
      [0.9, 0.9, 0.675, 0.50625, 0.3796875].map((x) => expect.closeTo(x, 12)),
    )
    expect(contentiousness(3, { initial: 0.8, decay: 0.5, hold: 1 })).toBeCloseTo(0.2, 12)
  })

  it("the nearest row of the paper's Table 2", () => {
    expect(toneFor(0.9).level).toBe(0.9)
    expect(toneFor(0.675).level).toBe(0.7)
    expect(toneFor(0.506).level).toBe(0.5)
    expect(toneFor(0.38).level).toBe(0.3)
    expect(toneFor(0.1).level).toBe(0)
  })

  it('CRIT-weighted P_f = (Ω_A·P_A + Ω_B·P_B)/(Ω_A + Ω_B); equal weights when both are 0', () => {
    const a = [
      { label: 'x', probability: 0.8 },
      { label: 'y', probability: 0.2 },
    ]
    const b = [{ label: 'y', probability: 1 }]
    // Ω = (3, 1): x = .75·.8 = .6; y = .75·.2 + .25·1 = .4.
    expect(combineCrit(a, b, 3, 1)).toEqual([
      { label: 'x', probability: expect.closeTo(0.6, 12) },
      { label: 'y', probability: expect.closeTo(0.4, 12) },
    ])
    // Equal weights: x = .4, y = .6 (sorted by probability).
    expect(combineCrit(a, b, 0, 0).map((p) => p.label)).toEqual(['y', 'x'])
  })

  it('EnToPPS: the mean where both list a label, the own value elsewhere, then normalised', () => {
    const a = [
      { label: 'x', probability: 0.5 },
      { label: 'y', probability: 0.5 },
    ]
    const b = [
      { label: 'y', probability: 0.5 },
      { label: 'z', probability: 0.5 },
    ]
    // x = .5, y = (.5 + .5)/2 = .5, z = .5 → each 1/3; ties keep the listed order.
    expect(entopps(a, b)).toEqual(['x', 'y', 'z'].map((label) => ({ label, probability: expect.closeTo(1 / 3, 12) })))
  })

  it('CRIT Γ: mean of γθ/100, reduced by up to half by rival reasons, within [0, 1]', () => {
    expect(critScore([])).toBe(0)
    expect(critScore([{ validity: 10, credibility: 10 }])).toBe(1)
    // (8·5 + 6·5)/100/2 = .35; rivals mean 10·10/100 = 1 → .35·(1 − .5) = .175.
    expect(
      critScore(
        [
          { validity: 8, credibility: 5 },
          { validity: 6, credibility: 5 },
        ],
        [{ validity: 10, credibility: 10 }],
      ),
    ).toBeCloseTo(0.175, 12)
  })

  it('ranks break ties by listed order; accuracy with Wilson and normal intervals', () => {
    const d = [
      { label: 'Flu', probability: 0.4 },
      { label: 'Cold', probability: 0.4 },
      { label: 'Covid', probability: 0.2 },
    ]
    expect(rankOf('cold', d)).toBe(2)
    // A tie reached by different sums (0.1 + 0.2 vs 0.3) is still a tie: listed order decides.
    expect(
      rankOf('b', [
        { label: 'a', probability: 0.1 + 0.2 },
        { label: 'b', probability: 0.3 },
      ]),
    ).toBe(2)
    expect(
      rankOf('a', [
        { label: 'b', probability: 0.3 },
        { label: 'a', probability: 0.1 + 0.2 },
      ]),
    ).toBe(2)
    expect(rankOf('Measles', d)).toBeNull()
    // Wilson for 8/10, z = 1.96: centre (.8 + .19208)/1.38416 = .71674, half 0.21012 → [.5098, .9434].
    const [lo, hi] = wilson(8, 10)
    expect(lo).toBeCloseTo(0.4902, 3)
    expect(hi).toBeCloseTo(0.9433, 3)
    const acc = accuracy(
      [
        { truth: 'Flu', final: d },
        { truth: 'Cold', final: d },
        { truth: 'Covid', final: d },
        { truth: 'Measles', final: d },
      ],
      2,
    )
    expect(acc.top1).toBe(0.25)
    expect(acc.topk).toBe(0.5)
    // Reciprocal ranks within k = 2: 1, 1/2, 0 (rank 3 > k), 0 → .375.
    expect(acc.mrr).toBeCloseTo(0.375, 12)
    expect(acc.mrrCi[0]).toBeLessThan(0.375)
    expect(acc.mrrCi[1]).toBeGreaterThan(0.375)
  })
})

describe('the CLI file format', () => {
  it('reads extra keys and prints every metric per round', () => {
    const out = debateMetrics(debateFileSchema.parse(fixture('jaundice')))
    expect(out.rounds).toHaveLength(3)
    expect(out.rounds[0]).toMatchObject({ round: 1, klAB: expect.closeTo(1.4632, 4), wd: expect.closeTo(0.35, 12) })
    expect(Object.keys(out.rounds[0] ?? {})).toEqual([
      'round',
      'labels',
      'entropyA',
      'entropyB',
      'klAB',
      'klBA',
      'crossEntropyAB',
      'crossEntropyBA',
      'jsd',
      'wd',
      'mi',
      'nmi',
      'warnings',
    ])
  })
})

const distribution = (n: number) =>
  fc
    .array(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: n, maxLength: n })
    .filter((xs) => xs.reduce((s, x) => s + x, 0) > 1e-6)
    .map((xs) => {
      const s = xs.reduce((a, x) => a + x, 0)
      return xs.map((x) => x / s)
    })
const pair = fc.integer({ min: 1, max: 10 }).chain((n) => fc.tuple(distribution(n), distribution(n)))

describe('properties', () => {
  it('JSD, WD and NMI lie in [0, 1]; KL ≥ 0; CE ≥ H of the smoothed P; MI ≤ min(H_A, H_B)', () => {
    fc.assert(
      fc.property(pair, ([p, q]) => {
        for (const v of [jsd(p, q), wasserstein01(p, q), normalizedMI(p, q)]) {
          expect(v).toBeGreaterThanOrEqual(0)
          expect(v).toBeLessThanOrEqual(1)
        }
        expect(kl(p, q)).toBeGreaterThanOrEqual(0)
        expect(crossEntropy(p, q)).toBeGreaterThanOrEqual(entropy(smooth(p)) - 1e-9)
        expect(crossEntropy(p, q)).toBeCloseTo(entropy(smooth(p)) + kl(p, q), 9)
        expect(mutualInformation(p, q)).toBeLessThanOrEqual(Math.min(entropy(p), entropy(q)) + 1e-9)
      }),
    )
  })

  it('symmetric where they should be; KL and CE swap with the agents', () => {
    fc.assert(
      fc.property(pair, ([p, q]) => {
        expect(jsd(q, p)).toBeCloseTo(jsd(p, q), 12)
        expect(wasserstein01(q, p)).toBeCloseTo(wasserstein01(p, q), 12)
        expect(mutualInformation(q, p)).toBeCloseTo(mutualInformation(p, q), 9)
        expect(normalizedMI(q, p)).toBeCloseTo(normalizedMI(p, q), 9)
      }),
    )
  })

  it("the coupling's marginals are P_A and P_B; MI = H and NMI = 1 for equal distributions", () => {
    fc.assert(
      fc.property(pair, ([p, q]) => {
        const J = coupling(p, q)
        for (const [i, x] of p.entries()) expect((J[i] as number[]).reduce((s, v) => s + v, 0)).toBeCloseTo(x, 9)
        for (const [j, y] of q.entries()) expect(J.reduce((s, row) => s + (row[j] as number), 0)).toBeCloseTo(y, 9)
        expect(mutualInformation(p, p)).toBeCloseTo(entropy(p), 9)
        expect(normalizedMI(p, p)).toBe(1)
      }),
    )
  })

  it('relabelling and reordering the labels changes nothing', () => {
    fc.assert(
      fc.property(pair, fc.integer(), ([p, q], seed) => {
        const labels = p.map((_, i) => `L${i}`)
        const list = (xs: number[]) =>
          xs.map((probability, i) => ({ label: labels[i] as string, probability })).filter((x) => x.probability > 0)
        const shuffle = <T>(xs: T[]) =>
          xs
            .map((x, i) => ({ x, k: Math.sin(seed + i) }))
            .sort((a, b) => a.k - b.k)
            .map((o) => o.x)
        const a = list(p)
        const b = list(q)
        const m1 = roundMetrics(a, b)
        const m2 = roundMetrics(shuffle(a), shuffle(b))
        for (const k of ['entropyA', 'entropyB', 'jsd', 'wd', 'mi', 'nmi'] as const) expect(m2[k]).toBeCloseTo(m1[k], 9)
        // KL/CE are smoothed over the union, which is the same set in any order.
        expect(m2.klAB).toBeCloseTo(m1.klAB, 9)
        const swapped = roundMetrics(b, a)
        expect(swapped.klAB).toBeCloseTo(m1.klBA, 9)
        expect(swapped.crossEntropyBA).toBeCloseTo(m1.crossEntropyAB, 9)
      }),
    )
  })

  it('the allocation-free path equals the readable functions', () => {
    // Pairs found by fast-check where MI summed as H_A + H_B − H(J) drifted: a dropped residual below TINY
    // (NMI 0.965 against 0) and cancellation under a tiny entropy (NMI 1.208e-7 against 1.198e-7).
    const found: [number[], number[]][] = [
      [
        [1, 0, 0, 0, 0, 0, 0, 3.3066434906758433e-18],
        [0.999999999999, 0, 0, 1.0000188150766308e-12, 0, 0, 0, 0],
      ],
      [
        [0, 0, 0, 2.6240480749703204e-9, 0, 0.9999999973759519, 0, 0],
        [0, 3.3031005720397667e-16, 0, 0, 0, 0.9999999999999997, 0, 0],
      ],
    ]
    fc.assert(
      fc.property(pair, ([p, q]) => {
        const out = new Float64Array(10)
        pairMetricsInto(Float64Array.from(p), Float64Array.from(q), 0, p.length, 0.001, out)
        const expected = [
          entropy(p),
          entropy(q),
          kl(p, q),
          kl(q, p),
          crossEntropy(p, q),
          crossEntropy(q, p),
          jsd(p, q),
          wasserstein01(p, q),
          mutualInformation(p, q),
          normalizedMI(p, q),
        ]
        // Relative tolerance: the fast path sums in another order (KL = Σp′log p′ − Σp′log q′).
        for (const [i, e] of expected.entries())
          expect(Math.abs((out[i] as number) - e)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(e)))
      }),
      { examples: found.map((pq) => [pq]) },
    )
  })
})
