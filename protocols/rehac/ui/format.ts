import type { RehacAction } from '@/protocols/rehac/core/protocol'

/** An action as the trajectory writes it: Search[x], Lookup[x], Finish[x], the statement, or submit. */
export function actionLabel(a: RehacAction): string {
  switch (a.type) {
    case 'search':
      return `Search[${a.arg}]`
    case 'lookup':
      return `Lookup[${a.arg}]`
    case 'finish':
      return `Finish[${a.arg}]`
    case 'submit':
      return 'submit'
    default:
      return a.arg
  }
}

export const pct = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined ? '—' : (x * 100).toFixed(digits)
