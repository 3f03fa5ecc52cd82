import { parse } from 'csv-parse/sync'
import { z } from 'zod'

/**
 * Dataset files → instances (x, y, e). Pure: strings in, rows and per-row errors out; the server
 * stores the rows only when there is no error at all, so nothing is ever half-imported.
 *
 * Kinds:
 *  - rad: the PXP radiology files (columns case,label,label_short,img_path,report,link):
 *    x = {image: file name of img_path}, y = label (one of the five), e = report.
 *  - drug: the PXP retrosynthesis file (columns output,input,explanation):
 *    x = {smiles: input (the product)}, y = output (reactant SMILES joined by '.'), e = explanation.
 *  - generic: any CSV/JSONL with a mapping: input columns → x, one prediction and one explanation column.
 *  - cases: EVINCE diagnosis cases: x = {symptoms} from a `symptoms` column (or the Kaggle disease-symptom
 *    layout: `Symptom_1` … `Symptom_17`, joined with ", ", underscores read as spaces), y = the ground
 *    truth from `label`, `diagnosis` or `disease` (any case; may be empty), e = `notes` if present.
 */
export const DATASET_KINDS = ['rad', 'drug', 'generic', 'cases'] as const
export type DatasetKind = (typeof DATASET_KINDS)[number]

export const RAD_LABELS = ['Atelectasis', 'Pneumonia', 'Pleural Effusion', 'Cardiomegaly', 'Pneumothorax'] as const

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

export const GenericMapping = z.object({
  inputColumns: z.array(z.string().min(1)).min(1, 'Choose at least one input column.'),
  predictionColumn: z.string().min(1, 'Choose the prediction column.'),
  explanationColumn: z.string().min(1, 'Choose the explanation column.'),
})
export type GenericMapping = z.infer<typeof GenericMapping>

/** The file name at the end of a path ("data/xrays/Case 1.png" → "Case 1.png"). */
export function baseName(p: string): string {
  return p.split(/[\\/]/).pop() ?? p
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : v === null || v === undefined ? '' : String(v))

type Record_ = Record<string, unknown>

function records(
  filename: string,
  content: string,
): { records: Array<{ line: number; value: Record_ }>; errors: RowError[] } {
  const errors: RowError[] = []
  const out: Array<{ line: number; value: Record_ }> = []
  if (/\.jsonl?$/i.test(filename)) {
    content.split(/\r?\n/).forEach((raw, i) => {
      if (!raw.trim()) return
      try {
        const value = JSON.parse(raw)
        if (value === null || typeof value !== 'object' || Array.isArray(value)) {
          errors.push({ line: i + 1, message: 'Each line must be a JSON object.' })
        } else out.push({ line: i + 1, value })
      } catch {
        errors.push({ line: i + 1, message: 'Not valid JSON.' })
      }
    })
    return { records: out, errors }
  }
  try {
    const rows = parse(content, {
      columns: true,
      skip_empty_lines: true,
      bom: true,
      info: true,
      trim: false,
    }) as Array<{
      record: Record_
      info: { lines: number }
    }>
    for (const r of rows) out.push({ line: r.info.lines, value: r.record })
  } catch (err) {
    const e = err as { lines?: number; message?: string }
    errors.push({ line: e.lines ?? 0, message: `The CSV cannot be read: ${e.message ?? String(err)}` })
  }
  return { records: out, errors }
}

function requireColumns(recs: Array<{ value: Record_ }>, columns: string[]): string[] {
  const first = recs[0]?.value ?? {}
  return columns.filter((c) => !(c in first))
}

/** Parse a dataset file of the given kind. Every problem is reported with its line; rows are returned only if usable. */
export function parseDataset(
  kind: DatasetKind,
  filename: string,
  content: string,
  opts: { mapping?: GenericMapping; availableAssets?: Set<string> } = {},
): ParseResult {
  const { records: recs, errors } = records(filename, content)
  const rows: InstanceInput[] = []
  const assets = new Set<string>()
  if (errors.length && !recs.length) return { rows, errors, assets: [] }
  if (!recs.length) return { rows, errors: [{ line: 1, message: 'The file has no rows.' }], assets: [] }

  const needed =
    kind === 'rad'
      ? ['label', 'img_path', 'report']
      : kind === 'drug'
        ? ['output', 'input', 'explanation']
        : opts.mapping
          ? [...opts.mapping.inputColumns, opts.mapping.predictionColumn, opts.mapping.explanationColumn]
          : []
  if (kind === 'generic' && !opts.mapping)
    return { rows, errors: [{ line: 1, message: 'A generic dataset needs a column mapping.' }], assets: [] }
  if (kind === 'cases') return parseCases(recs, errors)
  const missing = requireColumns(recs, needed)
  if (missing.length) {
    return {
      rows,
      errors: [{ line: 1, message: `Missing column${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.` }],
      assets: [],
    }
  }

  recs.forEach(({ line, value }, index) => {
    const problems: string[] = []
    let row: InstanceInput | undefined
    if (kind === 'rad') {
      const label = text(value.label)
      const image = baseName(text(value.img_path))
      if (!(RAD_LABELS as readonly string[]).includes(label))
        problems.push(`label "${label}" is not one of ${RAD_LABELS.join(', ')}`)
      if (!image) problems.push('img_path is empty')
      else if (opts.availableAssets && !opts.availableAssets.has(image))
        problems.push(`image "${image}" is not in the uploaded images`)
      if (!text(value.report)) problems.push('report is empty')
      const { label: _l, img_path: _i, report: _r, ...meta } = value
      row = { index, input: { image }, prediction: label, explanation: text(value.report), meta }
      if (image) assets.add(image)
    } else if (kind === 'drug') {
      const product = text(value.input)
      const reactants = text(value.output)
      if (!product) problems.push('input (the product SMILES) is empty')
      else if (/\s/.test(product)) problems.push('input SMILES contains spaces')
      if (!reactants) problems.push('output (the reactant SMILES) is empty')
      else if (/\s/.test(reactants)) problems.push('output SMILES contains spaces')
      if (!text(value.explanation)) problems.push('explanation is empty')
      const { input: _i, output: _o, explanation: _e, ...meta } = value
      row = { index, input: { smiles: product }, prediction: reactants, explanation: text(value.explanation), meta }
    } else if (opts.mapping) {
      const m = opts.mapping
      const input = Object.fromEntries(m.inputColumns.map((c) => [c, value[c]]))
      if (m.inputColumns.every((c) => !text(value[c]))) problems.push('all input columns are empty')
      if (!text(value[m.predictionColumn])) problems.push(`${m.predictionColumn} is empty`)
      const used = new Set([...m.inputColumns, m.predictionColumn, m.explanationColumn])
      const meta = Object.fromEntries(Object.entries(value).filter(([k]) => !used.has(k)))
      row = {
        index,
        input,
        prediction: text(value[m.predictionColumn]),
        explanation: text(value[m.explanationColumn]),
        meta,
      }
    }
    if (problems.length) errors.push({ line, message: problems.join('; ') })
    else if (row) rows.push(row)
  })
  return { rows: errors.length ? [] : rows, errors, assets: [...assets] }
}

const TRUTH_COLUMNS = ['label', 'diagnosis', 'disease']

function parseCases(recs: Array<{ line: number; value: Record_ }>, errors: RowError[]): ParseResult {
  const rows: InstanceInput[] = []
  const first = recs[0]?.value ?? {}
  const key = (names: string[]) => Object.keys(first).find((k) => names.includes(k.trim().toLowerCase()))
  const symptomsCol = key(['symptoms', 'case'])
  const symptomCols = Object.keys(first).filter((k) => /^symptom_?\d+$/i.test(k.trim()))
  const truthCol = key(TRUTH_COLUMNS)
  if (!symptomsCol && !symptomCols.length)
    return {
      rows,
      errors: [{ line: 1, message: 'Missing column: symptoms (or Symptom_1 … Symptom_17).' }],
      assets: [],
    }
  recs.forEach(({ line, value }, index) => {
    const symptoms = symptomsCol
      ? text(value[symptomsCol])
      : symptomCols
          .map((c) => text(value[c]).replace(/_/g, ' ').replace(/\s+/g, ' ').trim())
          .filter(Boolean)
          .join(', ')
    if (!symptoms) {
      errors.push({ line, message: 'symptoms are empty' })
      return
    }
    const used = new Set([symptomsCol, truthCol, 'notes', ...symptomCols])
    const meta = Object.fromEntries(Object.entries(value).filter(([k]) => !used.has(k)))
    rows.push({
      index,
      input: { symptoms },
      prediction: truthCol ? text(value[truthCol]) : '',
      explanation: text(value.notes),
      meta,
    })
  })
  return { rows: errors.length ? [] : rows, errors, assets: [] }
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
