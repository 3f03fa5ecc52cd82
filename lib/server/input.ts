import { z } from 'zod'

/**
 * Rules every input obeys before any schema sees it, in one place (`execute` applies them to every
 * operation's raw input; routes outside `execute` call `inputProblem` on theirs, `proxy.ts` checks
 * every path and query):
 *
 * - text holds no U+0000 (PostgreSQL refuses it in `text` and `jsonb`) and no unpaired surrogate
 *   (not text at all: `jsonb` refuses it, and it cannot be written as UTF-8);
 * - objects and arrays nest at most `MAX_INPUT_DEPTH` deep (deeper values overflow the stack of
 *   every recursive reader: JSON.stringify, Prisma, zod).
 */
export const MAX_INPUT_DEPTH = 64

export const TEXT_PROBLEM = 'Text may not contain NUL characters (U+0000) or unpaired surrogates.'
export const DEPTH_PROBLEM = `Nested too deeply (more than ${MAX_INPUT_DEPTH} levels of objects and arrays).`

/** No U+0000 and no unpaired surrogate. */
export function isCleanText(s: string): boolean {
  return !s.includes('\u0000') && s.isWellFormed()
}

/** The shared zod string for schemas that do not go through `execute` (its inputs are checked already). */
export const cleanString = () => z.string().refine(isCleanText, TEXT_PROBLEM)

export type InputProblem = { path: Array<string | number>; message: string }

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v)
  return Array.isArray(v) || proto === Object.prototype || proto === null
}

/**
 * The first value in `raw` that breaks the rules above, with where it is; null when there is none.
 * Iterative (a deep value cannot overflow it); files are checked by name; other class instances
 * (dates) are left to the schema.
 */
export function inputProblem(raw: unknown, maxDepth = MAX_INPUT_DEPTH): InputProblem | null {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: raw, path: [] }]
  const seen = new Set<object>()
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, path } = next
    if (typeof value === 'string') {
      if (!isCleanText(value)) return { path, message: TEXT_PROBLEM }
      continue
    }
    if (value === null || typeof value !== 'object' || seen.has(value)) continue
    seen.add(value)
    if (typeof Blob !== 'undefined' && value instanceof Blob) {
      const name = (value as Partial<File>).name
      if (typeof name === 'string' && !isCleanText(name)) return { path, message: `File name: ${TEXT_PROBLEM}` }
      continue
    }
    if (!isPlain(value)) continue
    if (path.length >= maxDepth) return { path, message: DEPTH_PROBLEM }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] })
      continue
    }
    for (const [k, v] of Object.entries(value)) {
      if (!isCleanText(k)) return { path: [...path, k], message: TEXT_PROBLEM }
      stack.push({ value: v, path: [...path, k] })
    }
  }
  return null
}

const INVALID_JSON = Symbol.for('invalid-json')

/**
 * A field that holds JSON: an object from REST callers, or its text from a form field. The text is
 * parsed before `schema` validates it; text that is not JSON fails the schema with its own message,
 * and so does parsed JSON that breaks the input rules (U+0000 from a `\u0000` escape, nesting
 * deeper than `MAX_INPUT_DEPTH`). With `blank`, an empty or whitespace-only text stands for
 * `blank.value`.
 */
export function jsonText<T extends z.ZodType>(schema: T, blank?: { value: unknown }) {
  return z.preprocess((v, ctx) => {
    if (typeof v !== 'string') return v
    if (blank && !v.trim()) return blank.value
    let parsed: unknown
    try {
      parsed = JSON.parse(v)
    } catch {
      return INVALID_JSON
    }
    const problem = inputProblem(parsed)
    if (problem) {
      const where = problem.path.length ? ` (at ${problem.path.join('.')})` : ''
      ctx.addIssue({ code: 'custom', message: `${problem.message}${where}`, input: v })
      return z.NEVER
    }
    return parsed
  }, schema)
}
