'use server'

import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import {
  previewRehacStep,
  type RehacPreview,
  type RehacSuggestion,
  suggestRehacStep,
} from '@/protocols/rehac/server/operations'

/** An answer for the step form: the data, or the server's message (shown as the form's error). */
export type Answer<T> = { ok: true; data: T } | { ok: false; error: string }

async function answer<T>(run: Promise<{ state: ActionState; data?: T }>): Promise<Answer<T>> {
  const { state, data } = await run
  if (data !== undefined) return { ok: true, data }
  // A message that only sums up field errors says less than the first of them ("search needs an argument").
  const field = state?.fieldsOnly ? Object.values(state.fieldErrors ?? {}).flat()[0] : undefined
  return { ok: false, error: field || state?.error || 'The server did not answer.' }
}

/** "Run": the Observation the action would get (`rehac.preview-step`); nothing is written. */
export async function previewStepAction(
  sessionId: string,
  seq: number,
  action: { type: string; arg: string },
): Promise<Answer<RehacPreview>> {
  return answer(runFormAction(previewRehacStep, { sessionId, seq, action }, ''))
}

/** "Show a suggestion": the agent's proposal for this step (`rehac.suggest-step`). */
export async function suggestStepAction(sessionId: string, seq: number): Promise<Answer<RehacSuggestion>> {
  return answer(runFormAction(suggestRehacStep, { sessionId, seq }, ''))
}
