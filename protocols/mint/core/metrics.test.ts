import { describe, expect, it } from 'vitest'
import { deltaFeedback, type EpisodeOutcome, invalidActionRatio, ols, round2, successRates } from './metrics'

describe('MINT metrics', () => {
  it('OLS over the paper’s gpt-3.5-turbo-0613 SR_1..5 gives slope 8.175 (reported 8.17) and R² 0.96', () => {
    const sr = [2.73, 16.89, 24.06, 31.74, 36.18]
    const fit = ols(sr.map((y, i) => ({ x: i + 1, y })))
    expect(fit.slope).toBeCloseTo(8.175, 10)
    // intercept = mean(SR) − 8.175·3 = 22.32 − 24.525
    expect(fit.intercept).toBeCloseTo(-2.205, 10)
    expect(fit.r2).toBeCloseTo(0.96, 2)
  })

  it('Δfeedback micro 51.37 − 36.18 = 15.19 and per task type', () => {
    // 586 tasks: SR with feedback 301/586 = 51.37 %, without 212/586 = 36.18 %
    const eps = (n: number, s: number, dataset: EpisodeOutcome['dataset']): EpisodeOutcome[] =>
      Array.from({ length: n }, (_, i) => ({ dataset, success: i < s }))
    const without = successRates([...eps(316, 116, 'gsm8k'), ...eps(134, 56, 'alfworld'), ...eps(136, 40, 'mbpp')])
    const withFb = successRates([...eps(316, 159, 'gsm8k'), ...eps(134, 89, 'alfworld'), ...eps(136, 53, 'mbpp')])
    expect(round2(without.sr)).toBe(36.18)
    expect(round2(withFb.sr)).toBe(51.37)
    const d = deltaFeedback(withFb, without)
    expect(round2(d.micro ?? null)).toBe(15.19)
    // the leaderboard's per-type SR_5: reasoning 36.71 → 50.32, decision making 41.79 → 66.42, code 29.41 → 38.97
    expect(round2(without.byType.reasoning?.sr ?? null)).toBe(36.71)
    expect(round2(withFb.byType.reasoning?.sr ?? null)).toBe(50.32)
    expect(round2(d.reasoning ?? null)).toBe(13.61)
    expect(round2(d.decision_making ?? null)).toBe(24.63)
    expect(round2(d.code_generation ?? null)).toBe(9.56)
    expect(without.byTask.gsm8k).toEqual({ records: 316, successes: 116, sr: (100 * 116) / 316 })
  })

  it('invalid-action ratio with the 20 % flag', () => {
    const counts = (p: number, u: number, i: number) => ({ propose_solution: p, use_tool: u, invalid_action: i })
    expect(
      invalidActionRatio([
        { dataset: 'gsm8k', success: false, counts: counts(1, 2, 2) },
        { dataset: 'gsm8k', success: true, counts: counts(1, 0, 0) },
      ]),
    ).toEqual({ invalid: 2, total: 6, ratio: 2 / 6, flagged: true })
    expect(invalidActionRatio([{ dataset: 'gsm8k', success: false, counts: counts(1, 3, 1) }]).flagged).toBe(false)
    expect(invalidActionRatio([]).ratio).toBeNull()
  })

  it('refuses a fit without two distinct budgets', () => {
    expect(() => ols([{ x: 5, y: 1 }])).toThrow(/two points/)
    expect(() =>
      ols([
        { x: 5, y: 1 },
        { x: 5, y: 2 },
      ]),
    ).toThrow(/distinct/)
  })
})
