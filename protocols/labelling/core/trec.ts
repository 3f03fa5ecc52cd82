/**
 * Readers for the TREC files the labelling protocol imports (seed 003 part B, §B.2 and §B.7):
 * topics, documents, qrels and runs. They are pure and bounded; each returns what it read and the
 * problems it found as `{ line, message }` (1-based lines). A caller refuses a file with any error:
 * the partial value is only there to show what was understood.
 *
 * - Topics, classic TREC format (Robust04's `04.testset`): `<top>` … `</top>` blocks with
 *   `<num> Number: 301`, `<title> …`, `<desc> Description: …`, `<narr> Narrative: …`; a field runs to
 *   the next tag and may span lines. Closing field tags (`</title>`) are accepted. The "Number:",
 *   "Topic:", "Description:" and "Narrative:" prefixes are dropped and whitespace runs collapsed to
 *   one space. The fields of TREC-1..3 topics (`<dom>`, `<smry>`, `<con>`, `<fac>`, `<def>`, `<nat>`)
 *   are skipped; any other tag is an error.
 * - Topics, JSON Lines: `{"id": "301", "title": "…", "description": "…", "narrative": "…"}`.
 *   `parseTopics` picks the form: JSON Lines when the first non-blank character is `{`.
 * - Documents, JSON Lines: `{"docid": "FT934-5418", "text": "…", "title": "…"}` (title optional).
 * - Qrels: `topic iter docid rel`, whitespace-separated; iter is ignored; rel an integer, kept as
 *   given (negative values such as ClueWeb's −2 "junk" included).
 * - Runs: `topic Q0 docid rank score tag`; Q0 is ignored. Lists are grouped by run tag, then topic
 *   (in order of first appearance) and ordered as trec_eval orders them: by score descending, ties
 *   by docid descending (trec_eval's `comp_sim_docno`: strcmp(b, a)); trec_eval ignores the rank
 *   column. `tieBreak: 'rank'` orders ties by the file's rank instead (then docid, descending).
 *
 * Ids (topic, docid, run tag) are non-empty and hold no whitespace. Blank lines are skipped.
 * Duplicates (a topic id, a docid, a qrel's topic+docid, a run's tag+topic+docid) are errors.
 */
import { z } from 'zod'

export type LineError = { line: number; message: string }
export type ParseResult<T> = { value: T; errors: LineError[] }

export interface Bounds {
  /** Longest accepted input, in characters. */
  maxChars?: number
  /** Most records (topics, documents, qrels, run lines). */
  maxRecords?: number
  /** Errors reported before the reader stops (one more says it stopped). */
  maxErrors?: number
}

export const TOPIC_BOUNDS = { maxChars: 20_000_000, maxRecords: 10_000, maxErrors: 50 } as const
export const DOCUMENT_BOUNDS = { maxChars: 400_000_000, maxRecords: 500_000, maxErrors: 50 } as const
export const QRELS_BOUNDS = { maxChars: 200_000_000, maxRecords: 5_000_000, maxErrors: 50 } as const
export const RUN_BOUNDS = { maxChars: 400_000_000, maxRecords: 10_000_000, maxErrors: 50 } as const
/** Longest document text accepted (the prompt cuts it much shorter; ./prompt.ts). */
export const MAX_DOCUMENT_TEXT = 5_000_000

export type Topic = { id: string; title: string; description?: string; narrative?: string }
export type TrecDocument = { docid: string; text: string; title?: string }
export type Qrel = { topic: string; docid: string; rel: number }
export type RankedDoc = { docid: string; score: number; rank: number }
export type RunTopic = { topic: string; docs: RankedDoc[] }
export type Run = { tag: string; topics: RunTopic[] }

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim()
const ID = /^\S+$/
const idField = (what: string) =>
  z
    .union([z.string(), z.number().int()])
    .transform((s) => String(s).trim())
    .pipe(
      z
        .string()
        .regex(ID, { message: `${what} is a non-empty id without whitespace` })
        .max(200),
    )

/** Collects errors up to the bound; `full` says the reader must stop. */
class Errors {
  readonly list: LineError[] = []
  full = false
  constructor(private readonly max: number) {}
  add(line: number, message: string) {
    if (this.full) return
    if (this.list.length >= this.max) {
      this.list.push({ line, message: `more than ${this.max} errors; stopped reading` })
      this.full = true
      return
    }
    this.list.push({ line, message })
  }
}

function issues(e: z.ZodError): string {
  return e.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ')
}

function tooLong(text: string, maxChars: number, errors: Errors): boolean {
  if (text.length <= maxChars) return false
  errors.add(1, `the file has ${text.length} characters; at most ${maxChars} are read`)
  return true
}

/** Calls `each` for every non-blank line (1-based numbers) until it returns false. */
function forLines(text: string, each: (line: string, n: number) => boolean | undefined): void {
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string
    if (l.trim() === '') continue
    if (each(l, i + 1) === false) return
  }
}

/** JSON Lines: each non-blank line one object checked by `schema`. */
function jsonLines<S extends z.ZodType>(
  text: string,
  schema: S,
  what: string,
  bounds: Required<Bounds>,
  keep: (v: z.output<S>, line: number, errors: Errors) => void,
): Errors {
  const errors = new Errors(bounds.maxErrors)
  if (tooLong(text, bounds.maxChars, errors)) return errors
  let count = 0
  forLines(text, (l, n) => {
    if (++count > bounds.maxRecords) {
      errors.add(n, `more than ${bounds.maxRecords} ${what}s; at most ${bounds.maxRecords} are read`)
      return false
    }
    let raw: unknown
    try {
      raw = JSON.parse(l)
    } catch (e) {
      errors.add(n, `not valid JSON (${e instanceof Error ? e.message : String(e)})`)
      return !errors.full
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      errors.add(n, `expected a JSON object (one ${what} per line)`)
      return !errors.full
    }
    const r = schema.safeParse(raw)
    if (!r.success) errors.add(n, issues(r.error))
    else keep(r.data, n, errors)
    return !errors.full
  })
  return errors
}

const optionalText = (max: number, what: string) =>
  z
    .string()
    .max(max, { message: `${what} has at most ${max} characters` })
    .nullish()
    .transform((s) => (s == null || oneLine(s) === '' ? undefined : oneLine(s)))

export const topicJsonSchema = z.object({
  id: idField('id'),
  title: z
    .string()
    .max(2000, { message: 'title has at most 2000 characters' })
    .transform(oneLine)
    .pipe(z.string().min(1, { message: 'title is not blank' })),
  description: optionalText(10_000, 'description'),
  narrative: optionalText(20_000, 'narrative'),
})

function withoutUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T
}

/** Topics as JSON Lines `{id, title, description?, narrative?}`. */
export function parseTopicsJsonl(text: string, bounds: Bounds = {}): ParseResult<Topic[]> {
  const topics: Topic[] = []
  const seen = new Map<string, number>()
  const errors = jsonLines(text, topicJsonSchema, 'topic', { ...TOPIC_BOUNDS, ...bounds }, (t, n, errs) => {
    const first = seen.get(t.id)
    if (first !== undefined) return errs.add(n, `topic ${t.id} is already defined on line ${first}`)
    seen.set(t.id, n)
    topics.push(withoutUndefined(t))
  })
  return { value: topics, errors: errors.list }
}

const TREC_FIELDS = { num: 'id', title: 'title', desc: 'description', narr: 'narrative' } as const
type TrecField = keyof typeof TREC_FIELDS
/** Fields of older TREC topics, skipped. */
const SKIPPED_FIELDS = new Set(['dom', 'smry', 'con', 'fac', 'def', 'nat'])
const PREFIX: Record<TrecField, RegExp> = {
  num: /^\s*Number:\s*/i,
  title: /^\s*Topic:\s*/i,
  desc: /^\s*Description:\s*/i,
  narr: /^\s*Narrative:\s*/i,
}
const FIELD_MAX: Record<TrecField, number> = { num: 200, title: 2000, desc: 10_000, narr: 20_000 }

/** Topics in the classic TREC `<top>` format (see the header). */
export function parseTrecTopics(text: string, bounds: Bounds = {}): ParseResult<Topic[]> {
  const b = { ...TOPIC_BOUNDS, ...bounds }
  const errors = new Errors(b.maxErrors)
  const topics: Topic[] = []
  if (tooLong(text, b.maxChars, errors)) return { value: topics, errors: errors.list }

  // Line numbers of increasing offsets, counted incrementally.
  let counted = 0
  let lineNo = 1
  const lineAt = (offset: number) => {
    for (; counted < offset; counted++) if (text.charCodeAt(counted) === 10) lineNo++
    return lineNo
  }

  type Open = { line: number; fields: Partial<Record<TrecField, { text: string; line: number }>> }
  let top: Open | undefined
  let field: TrecField | null = null
  const seen = new Map<string, number>()

  const closeTopic = (t: Open) => {
    const value: Partial<Record<TrecField, string>> = {}
    let bad = false
    for (const k of Object.keys(TREC_FIELDS) as TrecField[]) {
      const f = t.fields[k]
      if (!f) continue
      const s = oneLine(f.text.replace(PREFIX[k], ''))
      if (s.length > FIELD_MAX[k]) {
        errors.add(f.line, `<${k}> has ${s.length} characters; at most ${FIELD_MAX[k]}`)
        bad = true
      }
      if (s !== '') value[k] = s
    }
    if (!value.num) {
      errors.add(t.line, 'the topic has no <num> (e.g. "<num> Number: 301")')
      return
    }
    if (!ID.test(value.num)) {
      errors.add(t.fields.num?.line ?? t.line, `the topic number "${value.num}" holds whitespace`)
      return
    }
    if (!value.title) {
      errors.add(t.line, `topic ${value.num} has no <title>`)
      return
    }
    const first = seen.get(value.num)
    if (first !== undefined) {
      errors.add(t.line, `topic ${value.num} is already defined on line ${first}`)
      return
    }
    seen.set(value.num, t.line)
    if (bad) return
    if (topics.length >= b.maxRecords) {
      errors.add(t.line, `more than ${b.maxRecords} topics; at most ${b.maxRecords} are read`)
      errors.full = true
      return
    }
    topics.push(withoutUndefined({ id: value.num, title: value.title, description: value.desc, narrative: value.narr }))
  }

  const between = (from: number, to: number) => {
    const chunk = text.slice(from, to)
    if (top && field) {
      const f = top.fields[field]
      if (f) f.text += chunk
    } else if (!top) {
      const at = chunk.search(/\S/)
      if (at >= 0) errors.add(lineAt(from + at), 'text outside a <top> … </top> topic')
    }
  }

  const TAG = /<(\/?)([A-Za-z][A-Za-z0-9]*)\s*>/g
  let pos = 0
  for (const m of text.matchAll(TAG)) {
    if (errors.full) break
    const at = m.index
    between(pos, at)
    pos = at + m[0].length
    const line = lineAt(at)
    const closing = m[1] === '/'
    const name = (m[2] as string).toLowerCase()
    if (name === 'top') {
      if (!closing) {
        if (top) {
          errors.add(line, `<top> before the topic opened on line ${top.line} was closed with </top>`)
          closeTopic(top)
        }
        top = { line, fields: {} }
        field = null
      } else {
        if (!top) errors.add(line, '</top> without a <top>')
        else closeTopic(top)
        top = undefined
        field = null
      }
    } else if (name in TREC_FIELDS) {
      const k = name as TrecField
      if (!top) errors.add(line, `<${closing ? '/' : ''}${k}> outside a <top> … </top> topic`)
      else if (closing) field = null
      else if (top.fields[k]) {
        errors.add(line, `a second <${k}> in the topic opened on line ${top.line}`)
        field = null
      } else {
        top.fields[k] = { text: '', line }
        field = k
      }
    } else if (SKIPPED_FIELDS.has(name) && top) {
      field = null
    } else {
      errors.add(line, `unknown tag <${closing ? '/' : ''}${m[2]}>`)
    }
  }
  if (!errors.full) {
    between(pos, text.length)
    if (top) errors.add(top.line, 'the topic opened here is not closed with </top>')
  }
  return { value: topics, errors: errors.list }
}

/** Topics in either form: JSON Lines when the first non-blank character is `{`, else TREC `<top>`. */
export function parseTopics(text: string, bounds: Bounds = {}): ParseResult<Topic[]> & { format: 'jsonl' | 'trec' } {
  const first = /\S/.exec(text)?.[0]
  return first === '{'
    ? { ...parseTopicsJsonl(text, bounds), format: 'jsonl' }
    : { ...parseTrecTopics(text, bounds), format: 'trec' }
}

export const documentJsonSchema = z.object({
  docid: idField('docid'),
  text: z.string().max(MAX_DOCUMENT_TEXT, { message: `text has at most ${MAX_DOCUMENT_TEXT} characters` }),
  title: optionalText(2000, 'title'),
})

/** Documents as JSON Lines `{docid, text, title?}`. */
export function parseDocumentsJsonl(text: string, bounds: Bounds = {}): ParseResult<TrecDocument[]> {
  const docs: TrecDocument[] = []
  const seen = new Map<string, number>()
  const errors = jsonLines(text, documentJsonSchema, 'document', { ...DOCUMENT_BOUNDS, ...bounds }, (d, n, errs) => {
    const first = seen.get(d.docid)
    if (first !== undefined) return errs.add(n, `document ${d.docid} is already defined on line ${first}`)
    seen.set(d.docid, n)
    docs.push(withoutUndefined(d))
  })
  return { value: docs, errors: errors.list }
}

const INTEGER = /^[-+]?\d+$/
const FLOAT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/

/** Qrels lines `topic iter docid rel`. */
export function parseQrels(text: string, bounds: Bounds = {}): ParseResult<Qrel[]> {
  const b = { ...QRELS_BOUNDS, ...bounds }
  const errors = new Errors(b.maxErrors)
  const qrels: Qrel[] = []
  if (tooLong(text, b.maxChars, errors)) return { value: qrels, errors: errors.list }
  const seen = new Map<string, number>()
  let count = 0
  forLines(text, (l, n) => {
    if (++count > b.maxRecords) {
      errors.add(n, `more than ${b.maxRecords} qrels; at most ${b.maxRecords} are read`)
      return false
    }
    const f = l.trim().split(/\s+/)
    if (f.length !== 4) {
      errors.add(n, `expected 4 fields "topic iter docid rel", found ${f.length}`)
      return !errors.full
    }
    const [topic, , docid, rel] = f as [string, string, string, string]
    if (!INTEGER.test(rel)) {
      errors.add(n, `the relevance "${rel}" is not an integer`)
      return !errors.full
    }
    const key = `${topic}\u0000${docid}`
    const first = seen.get(key)
    if (first !== undefined) {
      errors.add(n, `topic ${topic}, document ${docid} is already judged on line ${first}`)
      return !errors.full
    }
    seen.set(key, n)
    qrels.push({ topic, docid, rel: Number(rel) })
    return !errors.full
  })
  return { value: qrels, errors: errors.list }
}

export interface RunOptions extends Bounds {
  /** Ties in score: trec_eval's docid-descending order (default) or the file's rank, then docid. */
  tieBreak?: 'trec_eval' | 'rank'
  /** Keep only the first `depth` documents of each list after ordering (e.g. 100, §B.2). */
  depth?: number
}

/** trec_eval's strcmp(b, a) on ids (code-unit order, the same as bytes for ASCII ids). */
const docidDescending = (a: RankedDoc, b: RankedDoc) => (a.docid < b.docid ? 1 : a.docid > b.docid ? -1 : 0)

/** The order a run list is evaluated in (see the header). */
export function compareRanked(tieBreak: 'trec_eval' | 'rank' = 'trec_eval') {
  return (a: RankedDoc, b: RankedDoc): number => {
    if (a.score !== b.score) return b.score - a.score
    if (tieBreak === 'rank' && a.rank !== b.rank) return a.rank - b.rank
    return docidDescending(a, b)
  }
}

/** Run lines `topic Q0 docid rank score tag`, as ranked lists per run tag and topic. */
export function parseRuns(text: string, options: RunOptions = {}): ParseResult<Run[]> {
  const b = { ...RUN_BOUNDS, ...options }
  const errors = new Errors(b.maxErrors)
  const runs = new Map<string, Map<string, RankedDoc[]>>()
  if (options.depth !== undefined && (!Number.isInteger(options.depth) || options.depth < 1))
    errors.add(1, 'depth is a positive integer')
  if (errors.list.length || tooLong(text, b.maxChars, errors)) return { value: [], errors: errors.list }
  const seen = new Map<string, number>()
  let count = 0
  forLines(text, (l, n) => {
    if (++count > b.maxRecords) {
      errors.add(n, `more than ${b.maxRecords} run lines; at most ${b.maxRecords} are read`)
      return false
    }
    const f = l.trim().split(/\s+/)
    if (f.length !== 6) {
      errors.add(n, `expected 6 fields "topic Q0 docid rank score tag", found ${f.length}`)
      return !errors.full
    }
    const [topic, , docid, rank, score, tag] = f as [string, string, string, string, string, string]
    if (!INTEGER.test(rank)) {
      errors.add(n, `the rank "${rank}" is not an integer`)
      return !errors.full
    }
    if (!FLOAT.test(score) || !Number.isFinite(Number(score))) {
      errors.add(n, `the score "${score}" is not a finite number`)
      return !errors.full
    }
    const key = `${tag}\u0000${topic}\u0000${docid}`
    const first = seen.get(key)
    if (first !== undefined) {
      errors.add(n, `run ${tag} lists document ${docid} for topic ${topic} twice (first on line ${first})`)
      return !errors.full
    }
    seen.set(key, n)
    const byTopic = runs.get(tag) ?? new Map<string, RankedDoc[]>()
    runs.set(tag, byTopic)
    const docs = byTopic.get(topic) ?? []
    byTopic.set(topic, docs)
    docs.push({ docid, score: Number(score), rank: Number(rank) })
    return !errors.full
  })
  const order = compareRanked(options.tieBreak)
  const value: Run[] = [...runs].map(([tag, byTopic]) => ({
    tag,
    topics: [...byTopic].map(([topic, docs]) => {
      docs.sort(order)
      return { topic, docs: options.depth !== undefined ? docs.slice(0, options.depth) : docs }
    }),
  }))
  return { value, errors: errors.list }
}
