import type { z } from 'zod'
import { type Checker, type RowKind, text } from '@/lib/tasks/datasets'
import { Gold, LabelItem } from '@/protocols/labelling/core/items'

// The import's row checker lives on the server side: lib/tasks/datasets streams files (node:stream),
// and core/items.ts is in the browser's bundle through the protocol (the registry), which must not be.

const zodProblem = (err: z.ZodError) =>
  err.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ')

/** A CSV cell of gold: a number when it reads as one, else the text; empty is no gold. */
function csvGold(v: unknown): Gold | undefined {
  const s = text(v)
  if (!s) return undefined
  return /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : s
}

/**
 * The `labelling-items` rows: CSV with columns id, text (and optionally title, format, gold), one text
 * item per row; or JSON Lines, each line an item of any kind (`kind` defaults to text) with an optional
 * `gold` (a file is JSON Lines when its name ends in .jsonl or .json). Item ids are unique in a file. The instance's input is the item; its prediction is the gold
 * as JSON ('' without), which no annotator receives.
 */
export const labellingRows =
  (format: 'csv' | 'jsonl'): RowKind =>
  (first) => {
    const jsonl = format === 'jsonl'
    if (!jsonl) {
      const missing = ['id', 'text'].filter((c) => !(c in first))
      if (missing.length) return `The CSV needs the columns id and text (missing: ${missing.join(', ')}).`
    }
    const ids = new Set<string>()
    const check: Checker = (value, index) => {
      let raw: Record<string, unknown>
      let gold: unknown
      if (jsonl) {
        const { gold: g, ...rest } = value
        gold = g
        raw = { kind: 'text', ...rest }
      } else {
        gold = csvGold(value.gold)
        raw = {
          kind: 'text',
          id: text(value.id),
          text: typeof value.text === 'string' ? value.text : '',
          ...(text(value.title) ? { title: text(value.title) } : {}),
          ...(text(value.format) ? { format: text(value.format) } : {}),
        }
      }
      const item = LabelItem.safeParse(raw)
      if (!item.success) return { problem: zodProblem(item.error) }
      if (ids.has(item.data.id)) return { problem: `The item id ${item.data.id} appears twice.` }
      ids.add(item.data.id)
      let goldValue: Gold | undefined
      if (gold !== undefined && gold !== null && gold !== '') {
        const g = Gold.safeParse(gold)
        if (!g.success) return { problem: `gold: ${zodProblem(g.error)}` }
        goldValue = g.data
      }
      return {
        row: {
          index,
          input: item.data as unknown as Record<string, unknown>,
          prediction: goldValue === undefined ? '' : JSON.stringify(goldValue),
          explanation: '',
          meta: {
            itemId: item.data.id,
            kind: item.data.kind,
            ...(item.data.kind === 'query-doc' ? { topicId: item.data.topicId, docId: item.data.docId } : {}),
          },
        },
      }
    }
    return check
  }
