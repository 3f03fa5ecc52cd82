import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parse as parseCsvStream } from 'csv-parse'
import { parse } from 'csv-parse/sync'

/**
 * Dataset files → instances (x, y, e): the generic machinery every dataset kind shares. Pure: bytes
 * in, records, rows and per-row errors out; the server stores the rows only when there is no error
 * at all, so nothing is ever half-imported. The kinds themselves (which columns, what a row becomes)
 * belong to the protocols: a kind's rows are a `RowKind` (protocols/pxp/core/datasets.ts,
 * protocols/evince/core/cases.ts), declared as a dataset kind by the protocol's plugin.
 */
export interface InstanceInput {
  index: number
  input: Record<string, unknown>
  prediction: string
  explanation: string
  meta: Record<string, unknown>
}

export interface RowError {
  /** 1-based line of the file (the header is line 1 in a CSV). */
  line: number
  message: string
}

export interface ParseResult {
  rows: InstanceInput[]
  errors: RowError[]
  /** Files the rows refer to (e.g. images), by name. */
  assets: string[]
}

/** The file name at the end of a path ("data/xrays/Case 1.png" → "Case 1.png"). */
export function baseName(p: string): string {
  return p.split(/[\\/]/).pop() ?? p
}

export type Record_ = Record<string, unknown>

/** One record of a data file with its 1-based line, or the reason the line cannot be read. */
export type SourceRecord = { line: number; value: Record_ } | { line: number; error: string }

const CSV_OPTIONS = { columns: true, skip_empty_lines: true, bom: true, info: true, trim: false } as const

const isJsonl = (filename: string) => /\.jsonl?$/i.test(filename)

function jsonRecord(raw: string, line: number): SourceRecord | null {
  if (!raw.trim()) return null
  try {
    const value = JSON.parse(raw)
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { line, error: 'Each line must be a JSON object.' }
    return { line, value }
  } catch {
    return { line, error: 'Not valid JSON.' }
  }
}

const csvError = (err: unknown): SourceRecord => {
  const e = err as { lines?: number; message?: string }
  return { line: e.lines ?? 0, error: `The CSV cannot be read: ${e.message ?? String(err)}` }
}

/** The records of a whole file held as a string (small files, tests). */
function records(filename: string, content: string): SourceRecord[] {
  const out: SourceRecord[] = []
  if (isJsonl(filename)) {
    content.split(/\r?\n/).forEach((raw, i) => {
      const r = jsonRecord(raw, i + 1)
      if (r) out.push(r)
    })
    return out
  }
  try {
    const rows = parse(content, CSV_OPTIONS) as Array<{ record: Record_; info: { lines: number } }>
    for (const r of rows) out.push({ line: r.info.lines, value: r.record })
  } catch (err) {
    out.push(csvError(err))
  }
  return out
}

/** Bytes handed to a parser at once: each slice is parsed in one go, so small slices keep the event loop free. */
const SLICE = 8 * 1024

async function* slices(chunks: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) for (let i = 0; i < chunk.length; i += size) yield chunk.subarray(i, i + size)
}

/**
 * The records of a file read piece by piece (CSV through csv-parse's stream parser, JSONL line by
 * line): memory stays bounded by one piece and one record, whatever the file's size. A CSV that
 * cannot be read ends with one error record at the line where reading stopped.
 */
export async function* streamRecords(
  filename: string,
  chunks: AsyncIterable<Uint8Array>,
): AsyncGenerator<SourceRecord> {
  if (isJsonl(filename)) {
    const decoder = new TextDecoder()
    let rest = ''
    let line = 0
    for await (const chunk of slices(chunks, SLICE)) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n')
      rest = parts.pop() ?? ''
      for (const raw of parts) {
        const r = jsonRecord(raw.replace(/\r$/, ''), ++line)
        if (r) yield r
      }
    }
    const last = jsonRecord((rest + decoder.decode()).replace(/\r$/, ''), ++line)
    if (last) yield last
    return
  }
  const parser = parseCsvStream(CSV_OPTIONS)
  // Feed the parser as it asks for more (its writable side), so only a piece or two is ever held,
  // in small slices: the parser works through each slice it is given in one go.
  const feeding = pipeline(Readable.from(slices(chunks, SLICE)), parser).catch(() => {}) // errors surface below
  try {
    for await (const r of parser as AsyncIterable<{ record: Record_; info: { lines: number } }>)
      yield { line: r.info.lines, value: r.record }
  } catch (err) {
    yield csvError(err)
  } finally {
    parser.destroy()
    await feeding
  }
}

/** One record checked: the instance it becomes (and the file it refers to), or what is wrong with it. */
export type ScanItem =
  | { line: number; row: InstanceInput; asset?: string }
  | { line: number; problem: string; fatal?: boolean }

/** A record's checks, set up from the first record: the instance it becomes, or what is wrong with it. */
export type Checker = (value: Record_, index: number) => { row: InstanceInput; asset?: string } | { problem: string }

/** What a kind's checks are told besides the records: the import's options, the images there are. */
export interface RowOptions {
  options?: unknown
  availableAssets?: ReadonlySet<string>
}

/**
 * A tabular dataset kind (CSV or JSONL, one instance per record): its checks, set up from the first
 * record (the columns); a string = the file is unusable (a missing column), reported at line 1.
 */
export type RowKind = (first: Record_, opts: RowOptions) => Checker | string

/** Trimmed text of a cell (null and absent are empty). */
export const text = (v: unknown) => (typeof v === 'string' ? v.trim() : v === null || v === undefined ? '' : String(v))

/**
 * Checks a file's records one at a time: the first record fixes the columns (a missing column is a
 * `fatal` problem at line 1, after which nothing more is checked), every record then becomes its
 * instance or a problem with its line. `end()` reports a file without rows. The sync parser and the
 * streaming import both go through it, so they cannot disagree.
 */
export class DatasetScanner {
  private check: Checker | undefined
  private fatal = false
  private index = 0
  private problems = 0

  constructor(
    private readonly kind: RowKind,
    private readonly opts: RowOptions = {},
  ) {}

  push(rec: SourceRecord): ScanItem | null {
    if (this.fatal) return null
    if ('error' in rec) {
      this.problems++
      return { line: rec.line, problem: rec.error }
    }
    if (!this.check) {
      const c = this.kind(rec.value, this.opts)
      if (typeof c === 'string') {
        this.fatal = true
        return { line: 1, problem: c, fatal: true }
      }
      this.check = c
    }
    const r = this.check(rec.value, this.index++)
    if ('problem' in r) return { line: rec.line, problem: r.problem }
    return { line: rec.line, ...r }
  }

  end(): ScanItem | null {
    if (this.fatal || this.check || this.problems) return null
    return { line: 1, problem: 'The file has no rows.', fatal: true }
  }
}

/**
 * The checked records of a file read piece by piece: what a tabular kind's streaming parser is
 * (the import job calls it once to check every row, and again to insert them).
 */
export async function* scanRows(
  kind: RowKind,
  filename: string,
  chunks: AsyncIterable<Uint8Array>,
  opts: RowOptions = {},
): AsyncGenerator<ScanItem> {
  const scanner = new DatasetScanner(kind, opts)
  for await (const rec of streamRecords(filename, chunks)) {
    const item = scanner.push(rec)
    if (!item) continue
    yield item
    // Nothing after a file-level problem (a missing column) is checked: stop reading the file.
    if ('problem' in item && item.fatal) return
  }
  const last = scanner.end()
  if (last) yield last
}

/** Parse a dataset file of the given kind. Every problem is reported with its line; rows are returned only if usable. */
export function parseDataset(kind: RowKind, filename: string, content: string, opts: RowOptions = {}): ParseResult {
  const scanner = new DatasetScanner(kind, opts)
  const rows: InstanceInput[] = []
  const errors: RowError[] = []
  const assets = new Set<string>()
  for (const item of [...records(filename, content).map((r) => scanner.push(r)), scanner.end()]) {
    if (!item) continue
    if ('problem' in item) {
      // A file-level problem (missing columns) replaces the line problems: it is the one to fix.
      if (item.fatal) return { rows: [], errors: [{ line: item.line, message: item.problem }], assets: [] }
      errors.push({ line: item.line, message: item.problem })
    } else {
      rows.push(item.row)
      if (item.asset) assets.add(item.asset)
    }
  }
  return { rows: errors.length ? [] : rows, errors, assets: errors.length ? [] : [...assets] }
}

export function mimeOf(name: string): string | null {
  const ext = name.toLowerCase().split('.').pop()
  return (
    (
      { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' } as Record<
        string,
        string
      >
    )[ext ?? ''] ?? null
  )
}

/** The columns a source file names its own rows by, in order of preference (RAD's `case` first). */
const SOURCE_ID_COLUMNS = ['case', 'case_id', 'caseId', 'id', 'ID', 'Id']

/**
 * The source file's own id of a row, kept among the columns an import stores beside x, y and e
 * (`meta`): RAD's `case`, or a `case_id`/`id` column; null when the file has none (DRUG's retro.csv),
 * where the 1-based data row (`index + 1`) joins back to the file instead.
 */
export function sourceIdOf(meta: unknown): string | null {
  if (!meta || typeof meta !== 'object') return null
  const m = meta as Record<string, unknown>
  for (const c of SOURCE_ID_COLUMNS) {
    const v = m[c]
    if ((typeof v === 'string' && v.trim() !== '') || typeof v === 'number') return String(v).trim()
  }
  return null
}
