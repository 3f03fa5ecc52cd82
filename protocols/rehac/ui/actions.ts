'use server'

import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import {
  previewRehacStep,
  type RehacPreview,
  type RehacSuggestion,
  suggestRehacStep,
} from '@/protocols/rehac/server/operations'
import { trainRehacPolicy } from '@/protocols/rehac/server/train'

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

/** The training page's answer: the model (paste it as a trained-policy decider's model) and its figures. */
export type TrainAnswer = Awaited<ReturnType<typeof trainRehacPolicy.run>>

/** "Train": `rehac.train` on the study's ended episodes (of the chosen runs, or all); nothing is stored. */
export async function trainPolicyAction(input: {
  studyId: string
  runIds?: string[]
  lambda: number
  epochs: number
  seed: number
  heldOutFraction: number
}): Promise<Answer<TrainAnswer>> {
  return answer(runFormAction(trainRehacPolicy, input, ''))
}
