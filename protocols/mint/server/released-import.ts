/**
 * Import of the authors' released MINT outputs (github.com/xingyaoww/mint-bench data/outputs) into a
 * study, so their runs sit beside Parley's on the leaderboard. The browser uploads the tree as a .zip
 * or a .tar.gz (the folder `data/outputs/<model>/…`, or any folder above or at the model's); every
 * `…/<model>/F=<feedback>/[PHF=…/]max<k>_p<p>+tool+cd/<type>/<dataset>/results.jsonl` in it becomes one
 * `MintImportedRun` row holding each record's outcome (success, action counts, terminate reason, token
 * counter; never the history). All or nothing: one bad path or line refuses the whole upload, naming
 * each problem (file:line, at most MAX_ERRORS), and stores nothing. A results file already imported
 * into the study (the same relative path) is replaced. Sizes are bounded: the upload, the inflated
 * bytes, each entry, the files, the records, each record (MAX_RECORD_CHARS).
 */
import { Gunzip, strFromU8 } from 'fflate'
import { z } from 'zod'
import { maxUploadBytes, maxUploadMb, uploadTooLargeMessage } from '@/lib/limits.mjs'
import { extractZip, ZipTooLarge, ZipUnreadable } from '@/lib/tasks/zip'
import {
  type Actor,
  actorRef,
  badRequest,
  db,
  defineOperation,
  id,
  type PluginEndpoint,
  type Prisma,
  requireStudyAccess,
  tooLarge,
  writeAudit,
} from '@/lib/server/sdk'
import { MAX_RECORD_CHARS, parseRecord, parseRunPath, type RunPath } from '../core/results'

/** The inflated bytes of the results files of one upload (the full release is about 31 MB). */
export const MAX_INFLATED_BYTES = 256 * 1024 * 1024
/** One results file (inflated). */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024
/** Results files and records per upload (the full release: 48 runs' files, 586 tasks × 6 runs). */
export const MAX_FILES = 2_000
export const MAX_RECORDS = 200_000
/** Problems listed in a refusal (the rest counted). */
export const MAX_ERRORS = 20

const fileInput = z.instanceof(File, { message: 'Choose a file.' }).refine((f) => f.size > 0, 'The file is empty.')

export const ImportResultsInput = z.object({
  studyId: id,
  /** The tree as a .zip or a .tar.gz. */
  file: fileInput,
  /** The model's name, when the archive holds the model folder's contents (F=… at its top). */
  model: z
    .string()
    .trim()
    .max(200)
    .regex(/^[^/\\]*$/, 'A model name has no slashes.')
    .optional()
    .transform((s) => (s === '' ? undefined : s)),
})
export type ImportResultsInput = z.input<typeof ImportResultsInput>

export interface RecordOutcome {
  taskId: string | number
  success: boolean
  actions: { propose_solution: number; use_tool: number; invalid_action: number }
  terminateReason: string
  tokenCounter: Record<string, number>
}

export interface ParsedRunFile {
  run: RunPath
  /** From the model folder on: "gpt-3.5-turbo-0613/F=None/max5_p2+tool+cd/reasoning/gsm8k/results.jsonl". */
  path: string
  outcomes: RecordOutcome[]
}

/** Collects the problems of an upload; refuses once it has them all (or too many to go on). */
export class TreeProblems {
  readonly list: string[] = []
  count = 0
  add(message: string) {
    this.count++
    if (this.list.length < MAX_ERRORS) this.list.push(message)
  }
  refuse(): never {
    const more = this.count > this.list.length ? ` (and ${this.count - this.list.length} more)` : ''
    throw badRequest(
      `The tree was not imported (nothing was stored): ${this.count} problem${this.count === 1 ? '' : 's'}${more}:\n${this.list.join('\n')}`,
      { file: this.list },
    )
  }
}

/**
 * The run path of an archive entry, from its model folder on: the part before the first `F=…` folder
 * is the model (or `model` when the entry starts at F=…); null for an entry that is not a results file.
 */
export function relativeRunPath(entry: string, model: string | undefined): string | null {
  const parts = entry.split(/[\\/]/).filter((s) => s !== '' && s !== '.')
  if (parts[parts.length - 1] !== 'results.jsonl' || parts.includes('__MACOSX')) return null
  const f = parts.findIndex((s) => s.startsWith('F='))
  if (f < 0) return parts.join('/') // parseRunPath names what is wrong
  if (f === 0) return model ? [model, ...parts].join('/') : `?/${parts.join('/')}`
  return parts.slice(f - 1).join('/')
}

/** One results file's text: its run (from the path) and each record's outcome; problems go to `problems`. */
export function parseRunFile(rel: string, text: string, problems: TreeProblems): ParsedRunFile | null {
  if (rel.startsWith('?/')) {
    problems.add(`${rel.slice(2)}: the archive holds a model folder's contents; name the model.`)
    return null
  }
  let run: RunPath
  try {
    run = parseRunPath(rel)
  } catch (e) {
    problems.add((e as Error).message)
    return null
  }
  const outcomes: RecordOutcome[] = []
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    const where = `${rel}:${i + 1}`
    if (line.length > MAX_RECORD_CHARS) {
      problems.add(`${where}: the record is longer than ${MAX_RECORD_CHARS} characters.`)
      return
    }
    try {
      const r = parseRecord(line, where)
      outcomes.push({
        taskId: r.task.task_id,
        success: r.state.success,
        actions: r.state.agent_action_count,
        terminateReason: r.state.terminate_reason,
        tokenCounter: r.state.token_counter,
      })
    } catch (e) {
      problems.add((e as Error).message)
    }
  })
  if (outcomes.length === 0 && problems.count === 0) problems.add(`${rel}: no records.`)
  return { run, path: rel, outcomes }
}

const isZip = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x4b
const isGzip = (b: Uint8Array) => b[0] === 0x1f && b[1] === 0x8b

async function bytesOf(file: File): Promise<Uint8Array> {
  return new Uint8Array(await file.arrayBuffer())
}

/** The gunzipped bytes of a .tar.gz, counted as they inflate (a gzip bomb stops at MAX_INFLATED_BYTES). */
function gunzipBounded(bytes: Uint8Array, max: number): Uint8Array {
  const parts: Uint8Array[] = []
  let total = 0
  let failure: Error | null = null
  const g = new Gunzip((chunk) => {
    if (failure) return
    total += chunk.length
    if (total > max) failure = new ZipTooLarge(max)
    else parts.push(chunk)
  })
  try {
    for (let i = 0; i < bytes.length && !failure; i += 64 * 1024)
      g.push(bytes.subarray(i, i + 64 * 1024), i + 64 * 1024 >= bytes.length)
  } catch (e) {
    throw new ZipUnreadable(`not a gzip file that can be read (${(e as Error).message})`)
  }
  if (failure) throw failure
  if (total < 512) throw new ZipUnreadable('the gzip file is empty or cut short (no tar inside)')
  return Buffer.concat(parts, total)
}

/** The regular files of a tar (ustar, with GNU long names and pax `path`), handed to `onFile` in order. */
export function readTar(tar: Uint8Array, onFile: (name: string, bytes: Uint8Array) => void): void {
  const text = (b: Uint8Array) => {
    const nul = b.indexOf(0)
    return strFromU8(nul < 0 ? b : b.subarray(0, nul))
  }
  let at = 0
  let longName: string | null = null
  while (at + 512 <= tar.length) {
    const h = tar.subarray(at, at + 512)
    if (h.every((x) => x === 0)) return
    const sum = h.reduce((a, x, i) => a + (i >= 148 && i < 156 ? 32 : x), 0)
    const stored = Number.parseInt(text(h.subarray(148, 156)).trim() || 'NaN', 8)
    if (stored !== sum) throw new ZipUnreadable(`not a tar archive (a header's checksum is wrong at byte ${at})`)
    const size = Number.parseInt(text(h.subarray(124, 136)).trim() || '0', 8)
    if (!Number.isFinite(size) || size < 0 || at + 512 + size > tar.length)
      throw new ZipUnreadable(`the tar archive is cut short at byte ${at}`)
    const type = String.fromCharCode(h[156] ?? 0)
    const prefix = text(h.subarray(257, 263)).startsWith('ustar') ? text(h.subarray(345, 500)) : ''
    const name = longName ?? (prefix ? `${prefix}/${text(h.subarray(0, 100))}` : text(h.subarray(0, 100)))
    const body = tar.subarray(at + 512, at + 512 + size)
    longName = null
    if (type === 'L') longName = text(body)
    else if (type === 'x') {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(strFromU8(body))
      if (m) longName = m[1] as string
    } else if (type === '0' || type === '\0') onFile(name, body)
    at += 512 + Math.ceil(size / 512) * 512
  }
}

/** The results files of an uploaded archive (.zip or .tar.gz), parsed; refuses with every problem. */
export async function parseTree(file: File, model: string | undefined): Promise<ParsedRunFile[]> {
  const problems = new TreeProblems()
  const runs: ParsedRunFile[] = []
  const seen = new Set<string>()
  let records = 0
  const take = (name: string, bytes: Uint8Array) => {
    const rel = relativeRunPath(name, model)
    if (rel === null) return
    if (seen.size >= MAX_FILES) throw badRequest(`The archive holds more than ${MAX_FILES} results files.`)
    if (bytes.length > MAX_ENTRY_BYTES)
      throw tooLarge(`${name} is larger than ${MAX_ENTRY_BYTES / 1024 / 1024} MB; nothing was stored.`)
    if (seen.has(rel)) {
      problems.add(`${rel}: twice in the archive.`)
      return
    }
    seen.add(rel)
    const parsed = parseRunFile(rel, strFromU8(bytes), problems)
    if (!parsed) return
    records += parsed.outcomes.length
    if (records > MAX_RECORDS) throw badRequest(`The archive holds more than ${MAX_RECORDS} records.`)
    runs.push(parsed)
  }
  const bytes = await bytesOf(file)
  try {
    if (isZip(bytes)) {
      await extractZip(
        (async function* () {
          yield bytes
        })(),
        {
          want: (n) => relativeRunPath(n, model) !== null,
          maxBytes: MAX_INFLATED_BYTES,
          onFile: async (name, data) => take(name, data),
        },
      )
    } else if (isGzip(bytes)) {
      readTar(gunzipBounded(bytes, MAX_INFLATED_BYTES), take)
    } else throw badRequest('Upload the results tree as a .zip or a .tar.gz.', { file: ['Upload a .zip or .tar.gz.'] })
  } catch (err) {
    if (err instanceof ZipTooLarge)
      throw tooLarge(`Refused: the archive inflates to more than ${MAX_INFLATED_BYTES / 1024 / 1024} MB.`)
    if (err instanceof ZipUnreadable)
      throw badRequest(`The archive cannot be read: ${err.message}`, { file: ['Upload a .zip or .tar.gz.'] })
    throw err
  }
  if (problems.count) problems.refuse()
  if (runs.length === 0)
    throw badRequest(
      'The archive holds no results.jsonl (expected <model>/F=<feedback>/[PHF=…/]max<k>_p<p>+tool+cd/<type>/<dataset>/results.jsonl).',
      { file: ['No results.jsonl in the archive.'] },
    )
  return runs.sort((a, b) => a.path.localeCompare(b.path))
}

/** The PHF folder name of a run (GT-textual …), null without one. */
export function phfName(phf: RunPath['phf']): string | null {
  return phf ? `${phf.groundTruth ? 'GT' : 'no_GT'}-${phf.form}` : null
}

/** Imports an uploaded tree into the study, all or nothing (files already there by path are replaced). Audited. */
export async function importReleasedResults(actor: Actor, raw: ImportResultsInput) {
  const input = ImportResultsInput.parse(raw)
  await requireStudyAccess(db, actor, input.studyId, 'write')
  if (input.file.size > maxUploadBytes()) throw tooLarge(uploadTooLargeMessage(input.file.size, maxUploadMb()))
  const runs = await parseTree(input.file, input.model)
  const importId = crypto.randomUUID()
  return db.$transaction(
    async (tx) => {
      const paths = runs.map((r) => r.path)
      const replaced = await tx.mintImportedRun.deleteMany({ where: { studyId: input.studyId, path: { in: paths } } })
      await tx.mintImportedRun.createMany({
        data: runs.map((r) => ({
          studyId: input.studyId,
          importId,
          model: r.run.model,
          feedback: r.run.feedback,
          phf: phfName(r.run.phf),
          k: r.run.k,
          p: r.run.p,
          taskType: r.run.taskType,
          dataset: r.run.dataset,
          path: r.path,
          records: r.outcomes.length,
          successes: r.outcomes.filter((o) => o.success).length,
          outcomes: r.outcomes as unknown as Prisma.InputJsonValue,
          importedById: actor.userId,
        })),
      })
      const summary = {
        importId,
        files: runs.length,
        records: runs.reduce((n, r) => n + r.outcomes.length, 0),
        models: [...new Set(runs.map((r) => r.run.model))],
        runs: [...new Set(runs.map((r) => `${r.run.model}/${r.run.run}`))].length,
        replaced: replaced.count,
      }
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'mint.import-results',
        resourceType: 'study',
        resourceId: input.studyId,
        studyId: input.studyId,
        after: { file: input.file.name, ...summary },
      })
      return summary
    },
    { timeout: 60_000 },
  )
}

/** The operation (staff who may change the study). */
export const importResults = defineOperation({
  name: 'mint.import-results',
  scope: 'studies:update',
  input: ImportResultsInput,
  run: (actor, input) => importReleasedResults(actor, input),
})

/** POST /api/v1/mint/results-imports: the operation over REST (multipart: studyId, file, model). */
export const importResultsEndpoint: PluginEndpoint = {
  method: 'POST',
  path: '/mint/results-imports',
  summary:
    "Import the authors' released MINT results (multipart/form-data: `studyId`; `file`: a .zip or .tar.gz of data/outputs/<model>, i.e. <model>/F=<feedback>/[PHF=…/]max<k>_p<p>+tool+cd/<category>/<dataset>/results.jsonl; `model`: the model's name when the archive starts at F=…). All or nothing: a bad path or line is named (400) and nothing is stored; a results file imported before under the same path is replaced",
  op: importResults,
  source: 'multipart',
  status: 201,
  output: z.object({
    importId: z.string(),
    files: z.number().int(),
    records: z.number().int(),
    models: z.array(z.string()),
    runs: z.number().int(),
    replaced: z.number().int(),
  }),
  errors: { 404: 'No such study, or not visible to you' },
  docBody: () =>
    z.object({
      studyId: z.string(),
      file: z.string().meta({ format: 'binary', description: 'The results tree as a .zip or .tar.gz.' }),
      model: z.string().optional(),
    }),
}
