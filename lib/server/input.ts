import { z } from 'zod'

const INVALID_JSON = Symbol.for('invalid-json')

/**
 * A field that holds JSON: an object from REST callers, or its text from a form field. The text is
 * parsed before `schema` validates it; text that is not JSON fails the schema with its own message.
 * With `blank`, an empty or whitespace-only text stands for `blank.value`.
 */
export function jsonText<T extends z.ZodType>(schema: T, blank?: { value: unknown }) {
  return z.preprocess((v) => {
    if (typeof v !== 'string') return v
    if (blank && !v.trim()) return blank.value
    try {
      return JSON.parse(v)
    } catch {
      return INVALID_JSON
    }
  }, schema)
}
