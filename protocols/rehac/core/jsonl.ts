import type { z } from 'zod'

/**
 * Rows of a JSONL text, each checked by `schema` (blank lines skipped): the first bad line throws
 * `fail("line N: …")` (not JSON, the schema's issues by path, or what `check` says of the row), and so
 * does a row past `max`.
 */
export function parseJsonlRows<T>(
  text: string,
  schema: z.ZodType<T>,
  opts: {
    what: string
    max: number
    fail?: (message: string) => Error
    /** A problem with a parsed row (e.g. a repeated id), or null. */
    check?: (row: T) => string | null
  },
): T[] {
  const fail = opts.fail ?? ((message: string) => new Error(message))
  const out: T[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim()
    if (!line) continue
    if (out.length >= opts.max) throw fail(`more than ${opts.max} ${opts.what} (line ${i + 1})`)
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch (e) {
      throw fail(`line ${i + 1}: not valid JSON (${e instanceof Error ? e.message : String(e)})`)
    }
    const parsed = schema.safeParse(raw)
    if (!parsed.success)
      throw fail(
        `line ${i + 1}: ${parsed.error.issues.map((x) => (x.path.length ? `${x.path.join('.')}: ${x.message}` : x.message)).join('; ')}`,
      )
    const problem = opts.check?.(parsed.data)
    if (problem) throw fail(`line ${i + 1}: ${problem}`)
    out.push(parsed.data)
  }
  return out
}
