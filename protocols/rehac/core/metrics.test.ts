import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'
import { countSolvers, evaluate, exactMatch, f1Score, normalizeAnswer } from './metrics'
import { parseJsonl } from './trajectory'

describe('answer normalisation, EM and token F1', () => {
  it('normalises as SQuAD does, and yes/no to true/false', () => {
    expect(normalizeAnswer('  The  Eiffel-Tower!! ')).toBe('eiffeltower')
    expect(normalizeAnswer('An apple, a pear and the plum.')).toBe('apple pear and plum')
    expect(normalizeAnswer('Yes.')).toBe('true')
    expect(normalizeAnswer('NO')).toBe('false')
    expect(normalizeAnswer('yes sir')).toBe('yes sir')
    expect(exactMatch('Yes', 'true')).toBe(true)
    expect(exactMatch('the Beatles', 'Beatles')).toBe(true)
    expect(exactMatch('Beatles band', 'Beatles')).toBe(false)
  })

  it('scores token F1 over shared tokens with multiplicity', () => {
    // pred {barack, obama, jr} vs gold {barack, obama}: P = 2/3, R = 1, F1 = 0.8.
    expect(f1Score('Barack Obama Jr.', 'Barack Obama')).toBeCloseTo(0.8, 12)
    // pred "new new york" vs gold "new york city": shared new×1, york×1: P = R = 2/3.
    expect(f1Score('new new york', 'New York City')).toBeCloseTo(2 / 3, 12)
    expect(f1Score('Paris', 'London')).toBe(0)
    expect(f1Score('', 'London')).toBe(0)
  })

  it('gives a yes/no answer credit only when it is exactly the gold one', () => {
    expect(f1Score('no', 'false')).toBe(1)
    expect(f1Score('yes', 'false')).toBe(0)
    // Token overlap would give 2/3 here; the boolean rule gives 0.
    expect(f1Score('true', 'true story')).toBe(0)
  })
})

describe('evaluate', () => {
  const line = (bits: string, f1: number, em: boolean | number) => ({
    trajectory: `Question: q\n${[...bits].map((b, i) => `<solver> ${b === '1' ? 'human' : 'agent'}\nAction ${i + 1}: Finish[x]\nObservation ${i + 1}: o`).join('\n')}\n\n`,
    f1,
    em,
  })

  it('counts steps and human steps from the marker lines only', () => {
    expect(countSolvers(line('0110', 1, 1).trajectory)).toEqual({ steps: 4, human: 2 })
    expect(countSolvers('Question: q\nObservation: a <solver> human inside a line\n<solver> agent\n')).toEqual({
      steps: 1,
      human: 0,
    })
  })

  it('gives T, EM, cost, R per trajectory averaged, and pooled HIR', () => {
    // R per trajectory: 1 − 0.1·2 = 0.8; 0.5 − 0 = 0.5; 0 − 0.1·1 = −0.1 → mean 0.4.
    const e = evaluate([line('0110', 1, true), line('0', 0.5, false), line('1', 0, 0)], 0.1)
    expect(e.trajectories).toBe(3)
    expect(e.T).toBeCloseTo(0.5, 12)
    expect(e.em).toBeCloseTo(1 / 3, 12)
    expect(e.humanSteps).toBe(3)
    expect(e.steps).toBe(6)
    expect(e.cost).toBeCloseTo(0.1, 12)
    expect(e.R).toBeCloseTo(0.4, 12)
    expect(e.R).toBeCloseTo(e.T - e.cost, 12)
    // Pooled 3/6, not the mean of per-trajectory rates (2/4, 0, 1 → 0.5 by chance here; see next case).
    expect(e.hir).toBe(0.5)
    expect(evaluate([line('1', 1, 1), line('0000', 1, 1)], 0.08).hir).toBe(0.2)
  })
})

// Paper Table 4 ("Ours (ReHAC)", λ = 0.08; rehac.md §4.5) from the authors' released evaluation outputs.
// Every figure ×100 and rounded to 2 decimals, as the table prints them.
describeShared(
  'ReHAC Table 4 from the released evaluation files',
  () => {
    const at2 = (x: number) => Math.round(x * 100 * 100) / 100
    const run = (name: string) =>
      evaluate(
        parseJsonl(readFileSync(sharedDir('datasets', 'rehac', 'results', `${name}_lambda0.08.jsonl`), 'utf8')),
        0.08,
      )

    it.each([
      ['hotpotqa', { R: 31.38, hir: 51.46, T: 46.9, humanSteps: 194, steps: 377 }],
      ['strategyqa', { R: 61.12, hir: 20.47, T: 66, humanSteps: 61, steps: 298 }],
      ['intercode', { R: 60.08, hir: 4.15, T: 62, humanSteps: 24, steps: 578 }],
    ] as const)('%s: R, HIR (pooled) and T as printed', (name, want) => {
      const e = run(name)
      expect(e.trajectories).toBe(100)
      expect({ R: at2(e.R), hir: at2(e.hir), T: at2(e.T), humanSteps: e.humanSteps, steps: e.steps }).toEqual(want)
    })

    it('hotpotqa EM is the boolean field counted 1/0', () => {
      expect(at2(run('hotpotqa').em)).toBe(37)
    })
  },
  'datasets/rehac',
)
