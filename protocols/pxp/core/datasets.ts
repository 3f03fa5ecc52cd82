import { z } from 'zod'
import { baseName, type Checker, type InstanceInput, type RowKind, text } from '@/lib/tasks/datasets'

/**
 * PXP's dataset kinds, as rows (pure; the PXP plugin declares them as dataset kinds):
 *  - rad: the PXP radiology files (columns case,label,label_short,img_path,report,link):
 *    x = {image: file name of img_path}, y = label (one of the five), e = report.
 *  - drug: the PXP retrosynthesis file (columns output,input,explanation):
 *    x = {smiles: input (the product)}, y = output (reactant SMILES joined by '.'), e = explanation.
 *  - generic: any CSV/JSONL with a mapping: input columns → x, one prediction and one explanation column.
 */
export const RAD_LABELS = ['Atelectasis', 'Pneumonia', 'Pleural Effusion', 'Cardiomegaly', 'Pneumothorax'] as const

export const GenericMapping = z.object({
  inputColumns: z.array(z.string().min(1)).min(1, 'Choose at least one input column.'),
  predictionColumn: z.string().min(1, 'Choose the prediction column.'),
  explanationColumn: z.string().min(1, 'Choose the explanation column.'),
})
export type GenericMapping = z.infer<typeof GenericMapping>

/** The options of a generic import: its column mapping (absent: the import fails at line 1, saying so). */
export interface GenericOptions {
  mapping?: GenericMapping
}

const missingColumns = (first: Record<string, unknown>, needed: string[]) => {
  const missing = needed.filter((c) => !(c in first))
  return missing.length ? `Missing column${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.` : null
}

const result = (row: InstanceInput, problems: string[], asset?: string): ReturnType<Checker> =>
  problems.length ? { problem: problems.join('; ') } : { row, ...(asset ? { asset } : {}) }

export const radRows: RowKind = (first, { availableAssets }) =>
  missingColumns(first, ['label', 'img_path', 'report']) ??
  ((value, index) => {
    const problems: string[] = []
    const label = text(value.label)
    const image = baseName(text(value.img_path))
    if (!(RAD_LABELS as readonly string[]).includes(label))
      problems.push(`label "${label}" is not one of ${RAD_LABELS.join(', ')}`)
    if (!image) problems.push('img_path is empty')
    else if (availableAssets && !availableAssets.has(image))
      problems.push(`image "${image}" is not in the uploaded images`)
    if (!text(value.report)) problems.push('report is empty')
    const { label: _l, img_path: _i, report: _r, ...meta } = value
    const row = { index, input: { image }, prediction: label, explanation: text(value.report), meta }
    return result(row, problems, image || undefined)
  })

export const drugRows: RowKind = (first) =>
  missingColumns(first, ['output', 'input', 'explanation']) ??
  ((value, index) => {
    const problems: string[] = []
    const product = text(value.input)
    const reactants = text(value.output)
    if (!product) problems.push('input (the product SMILES) is empty')
    else if (/\s/.test(product)) problems.push('input SMILES contains spaces')
    if (!reactants) problems.push('output (the reactant SMILES) is empty')
    else if (/\s/.test(reactants)) problems.push('output SMILES contains spaces')
    if (!text(value.explanation)) problems.push('explanation is empty')
    const { input: _i, output: _o, explanation: _e, ...meta } = value
    const row = { index, input: { smiles: product }, prediction: reactants, explanation: text(value.explanation), meta }
    return result(row, problems)
  })

export const genericRows: RowKind = (first, { options }) => {
  const m = (options as GenericOptions | undefined)?.mapping
  if (!m) return 'A generic dataset needs a column mapping.'
  return (
    missingColumns(first, [...m.inputColumns, m.predictionColumn, m.explanationColumn]) ??
    ((value, index) => {
      const problems: string[] = []
      const input = Object.fromEntries(m.inputColumns.map((c) => [c, value[c]]))
      if (m.inputColumns.every((c) => !text(value[c]))) problems.push('all input columns are empty')
      if (!text(value[m.predictionColumn])) problems.push(`${m.predictionColumn} is empty`)
      const used = new Set([...m.inputColumns, m.predictionColumn, m.explanationColumn])
      const meta = Object.fromEntries(Object.entries(value).filter(([k]) => !used.has(k)))
      const row = {
        index,
        input,
        prediction: text(value[m.predictionColumn]),
        explanation: text(value[m.explanationColumn]),
        meta,
      }
      return result(row, problems)
    })
  )
}
