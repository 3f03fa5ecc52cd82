/**
 * Axis ticks the charts can show honestly (pure, unit-tested).
 *
 * `niceTicks` picks evenly spaced round values (1, 2 or 5 × 10^n apart) that cover the data, and
 * `tickText` writes a tick with as many decimals as the step needs, so evenly spaced ticks stay
 * evenly spaced on screen (0.025, 0.05, 0.075, never 0.03, 0.05, 0.08).
 */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1]
  let lo = Math.min(min, max)
  let hi = Math.max(min, max)
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1
    lo -= pad
    hi += pad
  }
  const raw = (hi - lo) / Math.max(1, count - 1)
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag
  const first = Math.floor(lo / step + 1e-9) * step
  const ticks: number[] = []
  for (let v = first; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)))
  if ((ticks.at(-1) ?? hi) < hi) ticks.push(Number((first + ticks.length * step).toPrecision(12)))
  return ticks
}

/** Decimals a step needs (0.025 → 3, 0.5 → 1, 2 → 0). */
export function decimalsOf(step: number): number {
  if (!Number.isFinite(step) || step <= 0) return 0
  for (let d = 0; d <= 10; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d
  return 10
}

/** A tick of an axis whose ticks are `ticks`: every tick with the decimals the step needs. */
export function tickText(v: number, ticks: readonly number[]): string {
  const step = ticks.length > 1 ? Math.abs((ticks[1] as number) - (ticks[0] as number)) : 1
  return v.toFixed(decimalsOf(step))
}

/** Integer ticks 1..n (every k-th when there are many), for axes of message bounds or rounds. */
export function integerTicks(from: number, to: number, most = 12): number[] {
  if (to < from) return [from]
  const every = Math.max(1, Math.ceil((to - from + 1) / most))
  const out: number[] = []
  for (let v = from; v <= to; v += every) out.push(v)
  if (out.at(-1) !== to) out.push(to)
  return out
}
