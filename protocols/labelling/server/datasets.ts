import { scanRows } from '@/lib/tasks/datasets'
import type { DatasetKind } from '@/lib/server/sdk'
import { MAX_DOCUMENT } from '@/protocols/labelling/core'
import { labellingRows } from '@/protocols/labelling/server/rows'

/**
 * Labelling's dataset kind, through the engine's one streaming import (all or nothing: a file with a
 * problem on any line stores nothing, and the problems name their lines).
 */
export const labellingDatasets: Record<string, DatasetKind> = {
  'labelling-items': {
    label: 'Items to label',
    description: `CSV with columns id, text (optionally title, format: plain | markdown, gold), one text item per row; or JSON Lines, one item per line: {"kind": "text", "id", "text", "title"?, "format"?} | {"kind": "query-doc", "id", "topicId", "query", "description"?, "narrative"?, "docId", "document"} | {"kind": "transcript", "id", "sessionId", "protocol", "title", "turns": [{"index", "who", "text"}]}, each with an optional "gold" (the overall value, or answers by question id), which no annotator sees. Texts and documents up to ${MAX_DOCUMENT.toLocaleString('en')} characters.`,
    accepts: '.csv,.jsonl,.json,text/csv',
    parse: ({ data }) =>
      scanRows(labellingRows(/\.jsonl?$/i.test(data.name) ? 'jsonl' : 'csv'), data.name, data.read()),
  },
}
