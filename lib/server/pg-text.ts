/**
 * Text from outside (model replies above all) on its way into PostgreSQL, which refuses U+0000 in
 * `text` and in `jsonb` (as the escape `\u0000`) and refuses a `jsonb` string holding half of a
 * surrogate pair. A model can send either, and a refused INSERT would lose the call-log row and
 * stall the session, so every statement that writes model output passes its values through here:
 *
 * - `pgText` / `pgJson` (records: the call log, raw replies, contexts): U+0000 is written as the
 *   six characters `\u0000`, a lone surrogate as U+FFFD, so the record still shows where it was.
 * - `withoutNul` (the parsed answer a protocol goes on with): U+0000 is dropped, lone surrogates
 *   become U+FFFD, recursively through arrays and objects.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what this finds
const NUL = /\u0000/g
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

export function pgText(s: string): string
export function pgText(s: string | null | undefined): string | null
export function pgText(s: string | null | undefined): string | null {
  if (s === null || s === undefined) return null
  return s.replace(NUL, '\\u0000').replace(LONE_SURROGATE, '\ufffd')
}

function cleanKeys(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return pgText(value)
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [pgText(k), v]))
  return value
}

/** JSON text for a `jsonb` parameter: `JSON.stringify` with every string and key through `pgText`. */
export function pgJson(value: unknown): string {
  const text = JSON.stringify(value ?? null)
  // JSON.stringify writes U+0000 as \u0000 and a lone surrogate as \udXXX: only then is there work.
  return /\\u(?:0000|d[89a-f])/i.test(text) ? JSON.stringify(value ?? null, cleanKeys) : text
}

/** The value with U+0000 removed from every string (and key), lone surrogates made U+FFFD. */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return value.replace(NUL, '').replace(LONE_SURROGATE, '\ufffd') as T
  if (Array.isArray(value)) return value.map(withoutNul) as T
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), withoutNul(v)])) as T
  return value
}
