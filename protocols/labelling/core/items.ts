import { z } from 'zod'
import { OptionValue } from '@/protocols/labelling/core/schema'

/**
 * What a labelling session runs on: one item. A free text, a query with a document (TREC style: the
 * topic's query, description and narrative, the document's id and text), or a transcript of another
 * session by turn. Every string is bounded; a document or transcript is at most MAX_DOCUMENT characters.
 * Gold labels are never part of an item: an import keeps them in the dataset instance's `prediction`
 * (JSON), which no session's snapshot carries (the plugin's snapshot is the item alone).
 */
export const MAX_DOCUMENT = 200_000
export const MAX_TURNS = 500

const str = (max: number, what: string) =>
  z.string({ error: `${what} must be text.` }).max(max, `${what} is at most ${max.toLocaleString('en')} characters.`)
const req = (max: number, what: string) => str(max, what).trim().min(1, `${what} is empty.`)

const ItemId = req(200, 'The item id')

export const TextItem = z.object({
  kind: z.literal('text'),
  id: ItemId,
  title: str(500, 'The title').trim().optional(),
  text: req(MAX_DOCUMENT, 'The text'),
  format: z.enum(['plain', 'markdown']).default('plain'),
})
export const QueryDocItem = z.object({
  kind: z.literal('query-doc'),
  id: ItemId,
  topicId: req(100, 'The topic id'),
  query: req(2000, 'The query'),
  description: str(5000, 'The description').optional(),
  narrative: str(5000, 'The narrative').optional(),
  docId: req(200, 'The document id'),
  document: req(MAX_DOCUMENT, 'The document'),
})
export const TranscriptTurn = z.object({
  index: z.number().int().min(0).max(100_000),
  who: req(100, 'A turn’s speaker'),
  text: str(20_000, 'A turn’s text'),
})
export const TranscriptItem = z
  .object({
    kind: z.literal('transcript'),
    id: ItemId,
    sessionId: req(200, 'The session id'),
    protocol: req(50, 'The protocol'),
    title: req(500, 'The title'),
    turns: z.array(TranscriptTurn).min(1, 'A transcript has turns.').max(MAX_TURNS, `At most ${MAX_TURNS} turns.`),
  })
  .superRefine((t, ctx) => {
    const seen = new Set<number>()
    for (const turn of t.turns) {
      if (seen.has(turn.index))
        ctx.addIssue({ code: 'custom', path: ['turns'], message: `Turn ${turn.index} appears twice.` })
      seen.add(turn.index)
    }
    const total = t.turns.reduce((n, x) => n + x.text.length, 0)
    if (total > MAX_DOCUMENT)
      ctx.addIssue({
        code: 'custom',
        path: ['turns'],
        message: `A transcript is at most ${MAX_DOCUMENT.toLocaleString('en')} characters.`,
      })
  })

export const LabelItem = z.discriminatedUnion('kind', [TextItem, QueryDocItem, TranscriptItem])
export type LabelItem = z.output<typeof LabelItem>
export type TranscriptItem = z.output<typeof TranscriptItem>

/** A gold label as an import gives it: the overall value, or answers by question id. */
export const Gold = z.union([OptionValue, z.record(z.string().max(32), OptionValue)])
export type Gold = z.output<typeof Gold>

/** A short title of an item for lists. */
export function itemTitle(item: LabelItem): string {
  if (item.kind === 'query-doc') return `${item.topicId} · ${item.docId}: ${item.query.slice(0, 60)}`
  if (item.kind === 'transcript') return `${item.title.slice(0, 60)} (${item.turns.length} turns)`
  return item.title ? item.title.slice(0, 80) : `${item.id}: ${item.text.slice(0, 60)}`
}
