import { describe, expect, it } from 'vitest'
import { align } from './metrics'
import { type CaseResult, distributionColumns, mergedPredictions, textList, top1Correct } from './analysis'

describe('mergedPredictions: the debater bars show labels as the metrics merge them', () => {
  const list = [
    { label: 'Hepatitis C (HCV)', probability: 0.3, justification: 'anti-HCV' },
    { label: 'HCV', probability: 0.1, justification: 'risk factors' },
    { label: 'Cirrhosis', probability: 0.4 },
    { label: 'cirrhosis', probability: 0.2 },
  ]
  const aliases = { HCV: 'Hepatitis C' }

  it('adds the probabilities of labels that canonicalise alike, named by the first spelling', () => {
    const merged = mergedPredictions(list, aliases)
    expect(merged.map((m) => [m.label, Number(m.probability.toFixed(10))])).toEqual([
      ['Hepatitis C', 0.4],
      ['Cirrhosis', 0.6],
    ])
    expect(merged[0]?.listedAs).toEqual(['Hepatitis C (HCV)', 'HCV'])
    expect(merged[0]?.justification).toBe('anti-HCV risk factors')
    expect(merged[1]?.listedAs).toEqual(['Cirrhosis', 'cirrhosis'])
  })

  it('agrees with the metrics: the same names and, renormalised, the same probabilities as align', () => {
    const merged = mergedPredictions(list, aliases)
    const a = align(list, [{ label: 'Flu', probability: 1 }], { aliases })
    const total = merged.reduce((s, m) => s + m.probability, 0)
    expect(merged.map((m) => m.label)).toEqual(a.names.slice(0, merged.length))
    for (const [i, m] of merged.entries()) expect(m.probability / total).toBeCloseTo(a.p[i] as number, 12)
  })

  it('a label written as the metrics name it lists nothing else', () => {
    expect(mergedPredictions([{ label: 'Flu', probability: 1 }])).toEqual([
      { label: 'Flu', probability: 1, justification: '', listedAs: [] },
    ])
  })
})

describe('CSV helpers of the exports', () => {
  it('a column per item, empty past the end of the list', () => {
    expect(distributionColumns('A', [{ label: 'Flu', probability: 0.7 }], 2)).toEqual({
      A_1_label: 'Flu',
      A_1_probability: 0.7,
      A_2_label: null,
      A_2_probability: null,
    })
    expect(textList(['a', 'b'])).toBe('a | b')
    expect(textList([])).toBeNull()
  })

  it('top-1 correct compares as the accuracy table does (aliases, case, parentheticals)', () => {
    const final = [
      { label: 'Hepatitis C (HCV)', probability: 0.6 },
      { label: 'Cirrhosis', probability: 0.4 },
    ]
    expect(top1Correct('hepatitis c', final, {})).toBe(true)
    expect(top1Correct('HCV', final, { HCV: 'Hepatitis C' })).toBe(true)
    expect(top1Correct('Cirrhosis', final, {})).toBe(false)
    expect(top1Correct('', final, {})).toBeNull()
    expect(top1Correct('Flu', null, {})).toBeNull()
  })
})

describe('confusion: a square table', () => {
  const result = (truth: string, top: string): CaseResult => ({
    sessionId: truth + top,
    position: 0,
    status: 'done',
    stopReason: null,
    symptoms: '',
    truth,
    rounds: 1,
    aloneA: null,
    firstB: null,
    final: [{ label: top, probability: 1 }],
    entopps: null,
    finalEntropy: 1,
    excluded: null,
  })
  it('one label order on both axes, the diagonal the correct cases, labels as written in the cases', async () => {
    const { confusion } = await import('./analysis')
    const c = confusion(
      [
        result('Dengue Fever', 'Dengue fever (DF)'),
        result('Jaundice', 'Obstructive Jaundice'),
        result('Jaundice', 'Jaundice'),
        result('Malaria', 'Dengue Fever'),
      ],
      {},
    )
    expect(c.labels).toEqual(['dengue fever', 'jaundice', 'malaria', 'obstructive jaundice'])
    expect(c.names).toEqual(['Dengue Fever', 'Jaundice', 'Malaria', 'Obstructive Jaundice'])
    expect(c.matrix).toEqual([
      [1, 0, 0, 0],
      [0, 1, 0, 1],
      [1, 0, 0, 0],
      [0, 0, 0, 0],
    ])
    const correct = c.labels.reduce((s, _, i) => s + (c.matrix[i]?.[i] ?? 0), 0)
    expect(correct).toBe(2)
    for (const row of c.matrix) expect(row).toHaveLength(c.labels.length)
  })
})
