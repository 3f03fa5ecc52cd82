/**
 * The one way Parley writes costs and counts (pages and the CLI alike): thousands separators
 * everywhere, and no `$0.000000`. A cost of zero is `$0.00`; under a cent it keeps three significant
 * digits (`$0.000123`), under a dollar four decimals at most (`$0.0123`), otherwise cents (`$1,234.56`).
 */
const counts = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
const dollars = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
})
const cents = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
})
const fractions = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumSignificantDigits: 3,
  roundingPriority: 'morePrecision',
})

export function formatUsd(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—'
  const a = Math.abs(v)
  if (a === 0) return '$0.00'
  if (a < 0.01) return fractions.format(v)
  if (a < 1) return cents.format(v)
  return dollars.format(v)
}

export function formatCount(v: number | bigint | null | undefined): string {
  if (v === null || v === undefined) return '—'
  return counts.format(v)
}
