/**
 * The task reward T of ReHAC's InterCode-SQL task (PAPER §3.1: "Intersection over Union", following
 * InterCode) and the task file's line format. Pure; protocols/rehac/server/sql-env.ts runs the statements.
 */
import { z } from 'zod'
import { parseJsonlRows } from '@/lib/tasks/jsonl'

/** One cell as the database wrote it in text (PostgreSQL's text output), or null for SQL NULL. */
export type SqlCell = string | null
export type SqlRow = readonly SqlCell[]

/**
 * A row's identity for the comparison: the tuple of its cells' text, positionally (column names do not
 * count, so `SELECT title AS t` matches `SELECT title`), NULL distinct from the text 'NULL', and a cell's
 * text never confused with two cells (JSON keeps the boundaries).
 */
export function rowKey(row: SqlRow): string {
  return JSON.stringify(row)
}

function counts(rows: readonly SqlRow[]): Map<string, number> {
  const m = new Map<string, number>()
  for (const r of rows) {
    const k = rowKey(r)
    m.set(k, (m.get(k) ?? 0) + 1)
  }
  return m
}

/**
 * Intersection over union of two results as MULTISETS of rows: |A ∩ B| / |A ∪ B| where a row that occurs
 * a times in A and b times in B counts min(a, b) in the intersection and max(a, b) in the union. Row
 * order is ignored (an ORDER BY changes nothing); duplicates matter (SELECT vs SELECT DISTINCT differ
 * when the gold has repeats). Both empty: 1 (the empty result was asked for and given); one empty: 0.
 * InterCode's reward also weighs row order for ordered gold queries; ReHAC's paper says only IoU, and the
 * task here asks for the multiset rule.
 */
export function multisetIoU(predicted: readonly SqlRow[], gold: readonly SqlRow[]): number {
  if (predicted.length === 0 && gold.length === 0) return 1
  const a = counts(predicted)
  const b = counts(gold)
  let inter = 0
  let union = 0
  for (const [k, n] of a) {
    const m = b.get(k) ?? 0
    inter += Math.min(n, m)
    union += Math.max(n, m)
  }
  for (const [k, m] of b) if (!a.has(k)) union += m
  return inter / union
}

/** A line of an SQL task file: the natural-language request and the gold query answering it. */
export const sqlTask = z.object({
  id: z.string().trim().min(1).max(100),
  request: z.string().trim().min(1).max(2_000),
  gold: z.string().trim().min(1).max(4_000),
})
export type SqlTask = z.infer<typeof sqlTask>

/** Tasks from JSONL text (blank lines skipped); the error names the line. Ids must be unique. */
export function parseSqlTasksJsonl(text: string, max = 10_000): SqlTask[] {
  const seen = new Set<string>()
  return parseJsonlRows(text, sqlTask, {
    what: 'SQL tasks',
    max,
    check: (t) => {
      if (seen.has(t.id)) return `task id "${t.id}" appears twice`
      seen.add(t.id)
      return null
    },
  })
}
