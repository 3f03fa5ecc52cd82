import { describe, expect, it } from 'vitest'
import { decimalsOf, integerTicks, niceTicks, tickText } from './chart-ticks'

describe('honest chart ticks', () => {
  it('evenly spaced round ticks covering the data', () => {
    expect(niceTicks(0, 0.1)).toEqual([0, 0.025, 0.05, 0.075, 0.1])
    expect(niceTicks(0.21, 2.3)).toEqual([0, 1, 2, 3])
    expect(niceTicks(3, 3)).toEqual([2.6, 2.8, 3, 3.2, 3.4])
    for (const [lo, hi] of [
      [0, 0.1],
      [0.013, 0.87],
      [1.2, 47],
      [0, 2.1],
    ] as const) {
      const t = niceTicks(lo, hi)
      expect(t[0]).toBeLessThanOrEqual(lo)
      expect(t.at(-1)).toBeGreaterThanOrEqual(hi)
      const steps = t.slice(1).map((v, i) => v - (t[i] as number))
      for (const s of steps) expect(s).toBeCloseTo(steps[0] as number, 9)
    }
  })

  it('every tick written with the decimals its step needs, so the labels stay evenly spaced', () => {
    const t = niceTicks(0, 0.1)
    expect(t.map((v) => tickText(v, t))).toEqual(['0.000', '0.025', '0.050', '0.075', '0.100'])
    const labels = t.map((v) => Number(tickText(v, t)))
    const gaps = labels.slice(1).map((v, i) => Number((v - (labels[i] as number)).toFixed(9)))
    expect(new Set(gaps).size).toBe(1)
    expect(decimalsOf(0.5)).toBe(1)
    expect(decimalsOf(2)).toBe(0)
  })

  it('integer ticks for message bounds and rounds', () => {
    expect(integerTicks(1, 10)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(integerTicks(1, 30)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 30])
    expect(integerTicks(1, 1)).toEqual([1])
  })
})
