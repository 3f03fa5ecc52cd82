import type { z } from 'zod'

/** What a JSONL reader checks besides the schema, and how it fails. */
export interface JsonlOptions<T> {
  /** What the rows are ("pages", "trajectories" …), for the `max` message. */
  what: string
  /** More rows than this fail (Infinity: no limit). */
  max: number
  fail?: (message: string) => Error
  /** A problem with a parsed row (e.g. a repeated id), or null. */
  check?: (row: T) => string | null
}

/**
 * The one JSONL row parser, fed line by line (so a streamed file and a whole text read the same):
 * `push` takes the next line (1-based numbers counted here) and returns its row, or null for a blank
 * line. The first bad line throws `fail("line N: …")`: not JSON, the schema's issues by path, what
 * `check` says of the row, or a row past `max`.
 */
export class JsonlReader<T> {
  /** Lines read so far (the number of the last one). */
  line = 0
  /** Rows returned so far. */
  rows = 0
  private readonly fail: (message: string) => Error

  constructor(
    private readonly schema: z.ZodType<T>,
    private readonly opts: JsonlOptions<T>,
  ) {
    this.fail = opts.fail ?? ((message: string) => new Error(message))
  }

  push(text: string): T | null {
    const n = ++this.line
    const line = text.trim()
    if (!line) return null
    if (this.rows >= this.opts.max) throw this.fail(`more than ${this.opts.max} ${this.opts.what} (line ${n})`)
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch (e) {
      throw this.fail(`line ${n}: not JSON (${e instanceof Error ? e.message : String(e)})`)
    }
    const parsed = this.schema.safeParse(raw)
    if (!parsed.success)
      throw this.fail(
        `line ${n}: ${parsed.error.issues.map((x) => (x.path.length ? `${x.path.join('.')}: ${x.message}` : x.message)).join('; ')}`,
      )
    const problem = this.opts.check?.(parsed.data)
    if (problem) throw this.fail(`line ${n}: ${problem}`)
    this.rows++
    return parsed.data
  }
}

/** Rows of a whole JSONL text, each checked by `schema` (blank lines skipped; errors as JsonlReader's). */
export function parseJsonlRows<T>(text: string, schema: z.ZodType<T>, opts: JsonlOptions<T>): T[] {
  const reader = new JsonlReader(schema, opts)
  const out: T[] = []
  for (const line of text.split('\n')) {
    const row = reader.push(line)
    if (row !== null) out.push(row)
  }
  return out
}
