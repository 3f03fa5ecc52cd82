import type { OptionValue } from '@/protocols/labelling/core/schema'

/** The most frequent label of an item; null on a tie. */
export function majorityOf(values: readonly OptionValue[]): OptionValue | null {
  const counts = new Map<string, { v: OptionValue; n: number }>()
  for (const v of values) {
    const k = JSON.stringify(v)
    counts.set(k, { v, n: (counts.get(k)?.n ?? 0) + 1 })
  }
  let best: { v: OptionValue; n: number } | null = null
  let tie = false
  for (const c of counts.values()) {
    if (!best || c.n > best.n) {
      best = c
      tie = false
    } else if (c.n === best.n) tie = true
  }
  return best && !tie ? best.v : null
}
