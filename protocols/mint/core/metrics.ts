/**
 * MINT's metrics (mint-and-llm-labelling.md §A.2.4), in percent:
 * - SR_k: the share of tasks solved within a budget of k turns, micro over all tasks, per task type and per
 *   data set. In the released runs each k is its own run (max<k>_p<p>), not a prefix of the k = 5 run.
 * - the improvement per turn: the OLS fit SR_k = a + b·k over the budgets given, with R².
 * - Δfeedback = SR_5(with feedback) − SR_5(without), per task type and micro.
 * - the invalid-action ratio: invalid actions over all actions (the paper bolds models above 20 %).
 */
import { type Dataset, TASK_TYPE_OF, type TaskType } from './protocol'

export interface EpisodeOutcome {
  dataset: Dataset
  success: boolean
  counts?: { propose_solution: number; use_tool: number; invalid_action: number }
}

export interface SuccessRate {
  records: number
  successes: number
  /** In percent; null when there are no records. */
  sr: number | null
}

function rate(records: number, successes: number): SuccessRate {
  return { records, successes, sr: records === 0 ? null : (100 * successes) / records }
}

export interface SrBreakdown extends SuccessRate {
  byType: Partial<Record<TaskType, SuccessRate>>
  byTask: Partial<Record<Dataset, SuccessRate>>
}

/** SR micro, per task type and per data set. */
export function successRates(episodes: readonly EpisodeOutcome[]): SrBreakdown {
  const byType = new Map<TaskType, [number, number]>()
  const byTask = new Map<Dataset, [number, number]>()
  let n = 0
  let s = 0
  for (const e of episodes) {
    n++
    if (e.success) s++
    for (const [map, key] of [
      [byType, TASK_TYPE_OF[e.dataset]],
      [byTask, e.dataset],
    ] as const) {
      const c = (map as Map<string, [number, number]>).get(key) ?? [0, 0]
      c[0]++
      if (e.success) c[1]++
      ;(map as Map<string, [number, number]>).set(key, c)
    }
  }
  const obj = <K extends string>(m: Map<K, [number, number]>) =>
    Object.fromEntries([...m].map(([k, [a, b]]) => [k, rate(a, b)])) as Partial<Record<K, SuccessRate>>
  return { ...rate(n, s), byType: obj(byType), byTask: obj(byTask) }
}

export interface OlsFit {
  slope: number
  intercept: number
  /** null when every y is the same (no variance to explain). */
  r2: number | null
}

/** Ordinary least squares y = a + b·x, with R²; needs two distinct x. */
export function ols(points: readonly { x: number; y: number }[]): OlsFit {
  const n = points.length
  if (n < 2) throw new Error('OLS needs at least two points.')
  const mx = points.reduce((a, p) => a + p.x, 0) / n
  const my = points.reduce((a, p) => a + p.y, 0) / n
  let sxx = 0
  let sxy = 0
  let syy = 0
  for (const p of points) {
    sxx += (p.x - mx) ** 2
    sxy += (p.x - mx) * (p.y - my)
    syy += (p.y - my) ** 2
  }
  if (sxx === 0) throw new Error('OLS needs at least two distinct budgets k.')
  const slope = sxy / sxx
  const intercept = my - slope * mx
  let ssRes = 0
  for (const p of points) ssRes += (p.y - (intercept + slope * p.x)) ** 2
  return { slope, intercept, r2: syy === 0 ? null : 1 - ssRes / syy }
}

/** Δfeedback in percentage points, micro and per task type present in both (null when either SR is missing). */
export function deltaFeedback(
  withFeedback: SrBreakdown,
  without: SrBreakdown,
): { micro: number | null } & Partial<Record<TaskType, number | null>> {
  const d = (a: SuccessRate | undefined, b: SuccessRate | undefined) =>
    a?.sr == null || b?.sr == null ? null : a.sr - b.sr
  const out: { micro: number | null } & Partial<Record<TaskType, number | null>> = {
    micro: d(withFeedback, without),
  }
  for (const t of Object.keys(withFeedback.byType) as TaskType[])
    if (without.byType[t]) out[t] = d(withFeedback.byType[t], without.byType[t])
  return out
}

export const INVALID_ACTION_FLAG = 0.2

/** Invalid actions over all actions, and whether it passes the paper's 20 % mark. */
export function invalidActionRatio(episodes: readonly EpisodeOutcome[]): {
  invalid: number
  total: number
  ratio: number | null
  flagged: boolean
} {
  let invalid = 0
  let total = 0
  for (const e of episodes) {
    if (!e.counts) continue
    invalid += e.counts.invalid_action
    total += e.counts.invalid_action + e.counts.use_tool + e.counts.propose_solution
  }
  const ratio = total === 0 ? null : invalid / total
  return { invalid, total, ratio, flagged: ratio !== null && ratio > INVALID_ACTION_FLAG }
}

/** Rounds a percentage to 2 decimals (half away from zero), null kept. */
export function round2(x: number | null): number | null {
  if (x === null) return null
  return (Math.sign(x) * Math.round(Math.abs(x) * 100 + 1e-9)) / 100
}
