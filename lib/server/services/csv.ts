/** What a spreadsheet reads as the start of a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF; objects as JSON. Text
 * that a spreadsheet would run as a formula (starting with =, +, -, @, tab or CR; model output and
 * dataset cells can hold anything) gets a leading single quote, as OWASP recommends. Decided by the
 * value's type: numbers (-0.5 in a numeric column), booleans and dates are written as they are,
 * numbers to 12 significant digits so binary floating-point noise (0.30000000000000004) does not
 * reach the file (JSONL keeps every digit).
 */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s: string
  if (typeof v === 'number') s = String(Number.isInteger(v) || !Number.isFinite(v) ? v : Number(v.toPrecision(12)))
  else if (typeof v === 'bigint' || typeof v === 'boolean') s = String(v)
  else if (v instanceof Date) s = v.toISOString()
  else {
    s = typeof v === 'object' ? JSON.stringify(v) : String(v)
    if (FORMULA_START.test(s)) s = `'${s}`
  }
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/** One CSV line. */
export const csvLine = (values: readonly unknown[]) => values.map(csvField).join(',')
