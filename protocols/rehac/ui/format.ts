/** An action as the trajectory writes it (Search[x], Lookup[x], Finish[x], the statement, or submit). */
export { renderAction as actionLabel } from '@/protocols/rehac/core/trajectory'

export const pct = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined ? '—' : (x * 100).toFixed(digits)
