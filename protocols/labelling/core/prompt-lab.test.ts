import { describe, expect, it } from 'vitest'
import { rbo } from '../../../lib/metrics/agreement'
import { type LabItem, type LabVariant, promptLabTable } from './prompt-lab'

// Two topics, six documents; gold graded 0–2.
const items: LabItem[] = [
  { id: 'i1', topic: 'q1', docid: 'd1', gold: 2 },
  { id: 'i2', topic: 'q1', docid: 'd2', gold: 0 },
  { id: 'i3', topic: 'q1', docid: 'd3', gold: 1 },
  { id: 'i4', topic: 'q2', docid: 'd4', gold: 0 },
  { id: 'i5', topic: 'q2', docid: 'd5', gold: 1 },
  { id: 'i6', topic: 'q2', docid: 'd6', gold: 0 },
]
const v = (name: string, labels: Record<string, number | null>): LabVariant => ({
  name,
  labels: new Map(Object.entries(labels)),
})

describe('promptLabTable', () => {
  it('κ and binary MAE of each variant by hand, unparseable dropped and counted', () => {
    const perfect = v('-----', { i1: 2, i2: 0, i3: 1, i4: 0, i5: 1, i6: 0 })
    // binarised: model 1,1,0,0,1,0 vs gold 1,0,1,0,1,0 → a(m0g0)=2 (i4,i6) b(m0g1)=1 (i3) c(m1g0)=1 (i2) d=2 (i1,i5)
    const noisy = v('-DNA-', { i1: 1, i2: 2, i3: 0, i4: 0, i5: 2, i6: 0 })
    // i6 unparseable, i5 unlabelled: over i1..i4: model 1,0,1,0 vs gold 1,0,1,0 → κ = 1, MAE = 0
    const partial = v('R----', { i1: 2, i2: 0, i3: 1, i4: 0, i6: null })
    const t = promptLabTable(items, [perfect, noisy, partial], { resamples: 20, seed: 7, splitHalfIterations: 50 })
    const row = (name: string) => t.rows.find((r) => r.name === name)!
    expect(row('-----').kappa.estimate).toBe(1)
    expect(row('-----').mae.estimate).toBe(0)
    // p_o = 4/6; p_e = ((3·3) + (3·3))/36 = 0.5; κ = (2/3 − 1/2)/(1/2) = 1/3
    expect(row('-DNA-').kappa.estimate).toBeCloseTo(1 / 3, 12)
    expect(row('-DNA-').mae.estimate).toBeCloseTo(2 / 6, 12)
    expect(row('R----').n).toBe(4)
    expect(row('R----').unparseable).toBe(1)
    expect(row('R----').kappa.estimate).toBe(1)
    expect(row('-DNA-').unparseable).toBe(0)
    for (const r of t.rows) {
      expect(r.kappa.samples).toHaveLength(20)
      expect(r.rboQuery).toBeNull()
    }
    expect(t.rboNote).toMatch(/run file/)
    // AUC of the perfect variant across topics: every gold-ordered pair is ordered the same → 1.
    expect(row('-----').auc.estimate).toBe(1)
    expect(t.factorialComplete).toBe(false)
    expect(t.variantsPresent).toBe(3)
    expect(t.mainEffects.R!.nOn).toBe(1)
    // Table 3: effect of D = κ(-DNA-) − mean(κ(-----), κ(R----)) = 1/3 − 1
    expect(t.mainEffects.D!.effect).toBeCloseTo(1 / 3 - 1, 12)
    // Split-half over the items every variant labelled (i1..i4): a chosen variant every iteration.
    expect(t.splitHalfNote).toBe('over the 4 of 6 items every variant labelled')
    expect(Object.values(t.splitHalf!.chosen).reduce((x, y) => x + y, 0)).toBe(50)
  })

  it('the same seed gives the same intervals; different seeds differ', () => {
    const a = v('-----', { i1: 2, i2: 1, i3: 1, i4: 0, i5: 0, i6: 0 })
    const b = v('-DNA-', { i1: 1, i2: 2, i3: 0, i4: 0, i5: 2, i6: 0 })
    const t1 = promptLabTable(items, [a, b], { resamples: 30, seed: 3, splitHalfIterations: 100 })
    const t2 = promptLabTable(items, [a, b], { resamples: 30, seed: 3, splitHalfIterations: 100 })
    expect(t1.rows[0]!.kappa.samples).toEqual(t2.rows[0]!.kappa.samples)
    expect(t1.splitHalf).toEqual(t2.splitHalf)
    expect(Object.values(t1.splitHalf!.chosen).reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(100)
    expect(t1.best.kappa).not.toBeNull()
  })

  it('RBO of query and system orderings matches rbo() on hand-built orderings', () => {
    // Run A ranks d1 d2 d3 for q1, d4 d5 d6 for q2; run B ranks them reversed.
    const runs = {
      A: { q1: ['d1', 'd2', 'd3'], q2: ['d4', 'd5', 'd6'] },
      B: { q1: ['d3', 'd2', 'd1'], q2: ['d6', 'd5', 'd4'] },
    }
    // The model calls only d2 and d4 relevant.
    const model = v('-----', { i1: 0, i2: 1, i3: 0, i4: 1, i5: 0, i6: 0 })
    const t = promptLabTable(items, [model], { runs, queryRun: 'A', resamples: 5, splitHalfIterations: 0 })
    // RBP@100 φ=0.6, relevant = label ≥ 1. Gold: q1 rel d1,d3; q2 rel d5.
    const w = (r: number) => 0.4 * 0.6 ** (r - 1)
    const gold = { A: { q1: w(1) + w(3), q2: w(2) }, B: { q1: w(1) + w(3), q2: w(2) } }
    const llm = { A: { q1: w(2), q2: w(1) }, B: { q1: w(2), q2: w(3) } }
    const asc = (o: Record<string, number>) =>
      Object.entries(o)
        .sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1))
        .map(([k]) => k)
    const desc = (o: Record<string, number>) =>
      Object.entries(o)
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
        .map(([k]) => k)
    const mean = (o: Record<string, number>) => (o.q1! + o.q2!) / 2
    const qGold = asc(gold.A) // q2 (0.24) < q1 (0.544)
    const qLlm = asc(llm.A) // q1 (0.24) < q2 (0.4)
    expect(qGold).toEqual(['q2', 'q1'])
    expect(qLlm).toEqual(['q1', 'q2'])
    const sGold = desc({ A: mean(gold.A), B: mean(gold.B) })
    const sLlm = desc({ A: mean(llm.A), B: mean(llm.B) })
    expect(sLlm).toEqual(['A', 'B'])
    expect(t.rows[0]!.rboQuery!.estimate).toBeCloseTo(rbo(qGold, qLlm, 0.9).trunc, 12)
    expect(t.rows[0]!.rboSystem!.estimate).toBeCloseTo(rbo(sGold, sLlm, 0.7).trunc, 12)
    expect(t.rboNote).toBeNull()
    expect(t.splitHalfNote).toBe('skipped')
  })
})
