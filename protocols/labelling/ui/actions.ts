'use server'

import { runFormAction } from '@/lib/server/form-action'
import { adjudicateLabel } from '@/protocols/labelling/server/adjudication'

/** The adjudication form's answer: saved, or the server's message (a field's first error first). */
export type AdjudicateAnswer = { ok: true } | { ok: false; error: string }

/** "Set final label": `labelling.adjudicate` (scope, study write, the value an option, a note). */
export async function adjudicateAction(input: {
  runId: string
  position: number
  question: string
  value: string | number
  note: string
}): Promise<AdjudicateAnswer> {
  const { state, data } = await runFormAction(adjudicateLabel, input, '')
  if (data !== undefined) return { ok: true }
  const field = state?.fieldsOnly ? Object.values(state.fieldErrors ?? {}).flat()[0] : undefined
  return { ok: false, error: field || state?.error || 'The server did not answer.' }
}
