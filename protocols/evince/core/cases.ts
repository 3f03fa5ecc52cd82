import { type RowKind, text } from '@/lib/tasks/datasets'

/**
 * EVINCE's diagnosis cases, as rows (pure; the EVINCE plugin declares them as the `cases` dataset
 * kind): x = {symptoms} from a `symptoms` column (or the Kaggle disease-symptom layout: `Symptom_1` …
 * `Symptom_17`, joined with ", ", underscores read as spaces), y = the ground truth from `label`,
 * `diagnosis` or `disease` (any case; may be empty), e = `notes` if present.
 */
const TRUTH_COLUMNS = ['label', 'diagnosis', 'disease']

export const casesRows: RowKind = (first) => {
  const key = (names: string[]) => Object.keys(first).find((k) => names.includes(k.trim().toLowerCase()))
  const symptomsCol = key(['symptoms', 'case'])
  const symptomCols = Object.keys(first).filter((k) => /^symptom_?\d+$/i.test(k.trim()))
  const truthCol = key(TRUTH_COLUMNS)
  if (!symptomsCol && !symptomCols.length) return 'Missing column: symptoms (or Symptom_1 … Symptom_17).'
  const used = new Set([symptomsCol, truthCol, 'notes', ...symptomCols])
  return (value, index) => {
    const symptoms = symptomsCol
      ? text(value[symptomsCol])
      : symptomCols
          .map((c) => text(value[c]).replace(/_/g, ' ').replace(/\s+/g, ' ').trim())
          .filter(Boolean)
          .join(', ')
    if (!symptoms) return { problem: 'symptoms are empty' }
    const meta = Object.fromEntries(Object.entries(value).filter(([k]) => !used.has(k)))
    return {
      row: {
        index,
        input: { symptoms },
        prediction: truthCol ? text(value[truthCol]) : '',
        explanation: text(value.notes),
        meta,
      },
    }
  }
}
