/** One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF; objects as JSON. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  const s = v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v)
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/** One CSV line. */
export const csvLine = (values: readonly unknown[]) => values.map(csvField).join(',')
