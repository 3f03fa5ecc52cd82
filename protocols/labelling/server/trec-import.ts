import type { DatasetItem, DatasetKind, DatasetSource, ImportFile } from '@/lib/server/sdk'
import { QueryDocItem } from '@/protocols/labelling/core/items'
import {
  DOCUMENT_BOUNDS,
  type LineError,
  parseDocumentsJsonl,
  parseQrels,
  parseRuns,
  parseTopics,
  QRELS_BOUNDS,
  RUN_BOUNDS,
  TOPIC_BOUNDS,
} from '@/protocols/labelling/core/trec'

/**
 * TREC collections as datasets, through the engine's one streaming import (all or nothing, problems by
 * line, the job's caps):
 * - `trec`: the qrels file (`topic iter docid rel`) with the topics (TREC `<top>` or JSONL) and the
 *   documents (JSONL `{docid, text, title?}`) uploaded beside it. One `query-doc` item per judged
 *   (topic, document) pair, in qrels order, its relevance the gold (the instance's prediction). A
 *   document without a qrel is not imported (nothing to compare a label with); a qrel whose topic or
 *   document is missing is a problem of its qrels line. A labelling run takes it like `labelling-items`.
 * - `trec-runs`: a run file (`topic Q0 docid rank score tag`, several tags allowed): one instance per run
 *   tag holding its ranking per topic (the first RUN_DEPTH documents, in trec_eval's order), for the
 *   prompt lab's RBO of query and system orderings. Not labelled itself.
 */

export const RUN_DEPTH = 100

async function readAll(file: ImportFile, maxChars: number): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const c of file.read()) {
    size += c.length
    // UTF-8 bytes ≥ characters: a file within maxChars characters may be refused only when it is larger in bytes.
    if (size > maxChars * 4)
      throw new Error(`${file.name} is larger than the ${maxChars.toLocaleString('en')} characters read`)
    chunks.push(c)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** A problem of an attachment, reported at line 0 of the import with its own file and line. */
const attachmentProblems = (file: string, errors: LineError[]): DatasetItem[] =>
  errors.map((e) => ({ line: 0, problem: `${file}, line ${e.line}: ${e.message}`, fatal: true }))

/** The 1-based qrels line of each (topic, docid), as parseQrels counts lines (first occurrence). */
function qrelLines(text: string): Map<string, number> {
  const out = new Map<string, number>()
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const f = lines[i]!.trim().split(/\s+/)
    if (f.length !== 4) continue
    const key = `${f[0]}\u0000${f[2]}`
    if (!out.has(key)) out.set(key, i + 1)
  }
  return out
}

async function* trecItems(source: DatasetSource): AsyncIterable<DatasetItem> {
  const topicsFile = source.attachments.find((a) => a.role === 'topics')
  const docsFile = source.attachments.find((a) => a.role === 'documents')
  if (!topicsFile || !docsFile) {
    yield {
      line: 0,
      problem: 'Upload the topics (TREC <top> or JSONL) and the documents (JSONL) beside the qrels.',
      fatal: true,
    }
    return
  }
  let topicsText: string
  let docsText: string
  let qrelsText: string
  try {
    topicsText = await readAll(topicsFile, TOPIC_BOUNDS.maxChars)
    docsText = await readAll(docsFile, DOCUMENT_BOUNDS.maxChars)
    qrelsText = await readAll(source.data, QRELS_BOUNDS.maxChars)
  } catch (err) {
    yield { line: 0, problem: err instanceof Error ? err.message : String(err), fatal: true }
    return
  }
  const topics = parseTopics(topicsText)
  const docs = parseDocumentsJsonl(docsText)
  const bad = [...attachmentProblems(topicsFile.name, topics.errors), ...attachmentProblems(docsFile.name, docs.errors)]
  if (bad.length) {
    yield* bad
    return
  }
  const qrels = parseQrels(qrelsText)
  for (const e of qrels.errors) yield { line: e.line, problem: e.message }
  if (qrels.errors.length) return
  const topicById = new Map(topics.value.map((t) => [t.id, t]))
  const docById = new Map(docs.value.map((d) => [d.docid, d]))
  const lineOf = qrelLines(qrelsText)
  let index = 0
  for (const q of qrels.value) {
    const line = lineOf.get(`${q.topic}\u0000${q.docid}`) ?? 0
    const topic = topicById.get(q.topic)
    const doc = docById.get(q.docid)
    if (!topic) {
      yield { line, problem: `topic ${q.topic} is not in ${topicsFile.name}` }
      continue
    }
    if (!doc) {
      yield { line, problem: `document ${q.docid} is not in ${docsFile.name}` }
      continue
    }
    const item = QueryDocItem.safeParse({
      kind: 'query-doc',
      id: `${q.topic}:${q.docid}`,
      topicId: q.topic,
      query: topic.title,
      ...(topic.description ? { description: topic.description } : {}),
      ...(topic.narrative ? { narrative: topic.narrative } : {}),
      docId: q.docid,
      document: doc.title ? `${doc.title}\n\n${doc.text}` : doc.text,
    })
    if (!item.success) {
      yield { line, problem: item.error.issues[0]?.message ?? 'not a query–document item' }
      continue
    }
    yield {
      line,
      row: {
        index: index++,
        input: item.data,
        prediction: JSON.stringify(q.rel),
        explanation: '',
        meta: { itemId: item.data.id, kind: 'query-doc', topicId: q.topic, docId: q.docid },
      },
    }
  }
}

async function* runItems(source: DatasetSource): AsyncIterable<DatasetItem> {
  let text: string
  try {
    text = await readAll(source.data, RUN_BOUNDS.maxChars)
  } catch (err) {
    yield { line: 0, problem: err instanceof Error ? err.message : String(err), fatal: true }
    return
  }
  const runs = parseRuns(text)
  for (const e of runs.errors) yield { line: e.line, problem: e.message }
  if (runs.errors.length) return
  for (const [index, run] of runs.value.entries()) {
    const topics = Object.fromEntries(run.topics.map((t) => [t.topic, t.docs.slice(0, RUN_DEPTH).map((d) => d.docid)]))
    yield {
      line: 0,
      row: {
        index,
        input: { id: run.tag, kind: 'trec-run', tag: run.tag, topics },
        prediction: '',
        explanation: '',
        meta: { tag: run.tag, topics: run.topics.length },
      },
    }
  }
}

export const trecDatasets: Record<string, DatasetKind> = {
  trec: {
    label: 'TREC collection (qrels, topics, documents)',
    description:
      'The qrels file ("topic 0 docid rel" per line) with the topics (TREC <top> blocks or JSON Lines {"id", "title", "description"?, "narrative"?}) and the documents (JSON Lines {"docid", "text", "title"?}) beside it. One query–document item per judged pair, the qrel its gold; documents without a qrel are not imported; a qrel whose topic or document is missing is refused with its line.',
    accepts: '.txt,.qrels,text/plain',
    attachments: [
      { field: 'topics', label: 'Topics (TREC <top> or JSONL)', accept: '.txt,.jsonl,.xml,text/plain' },
      { field: 'documents', label: 'Documents (JSONL)', accept: '.jsonl,.json' },
    ],
    parse: trecItems,
  },
  'trec-runs': {
    label: 'TREC run files',
    description: `Run lines "topic Q0 docid rank score tag" (one or several tags): one instance per run tag, its first ${RUN_DEPTH} documents per topic in trec_eval's order. The prompt lab scores each run per query under gold and under each prompt's labels (RBO of query and system orderings).`,
    accepts: '.txt,.run,text/plain',
    parse: runItems,
  },
}
