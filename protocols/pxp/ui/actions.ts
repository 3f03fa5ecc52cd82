'use server'

import { runFormAction } from '@/lib/server/form-action'
import { checkPxpAnswer } from '@/protocols/pxp/server/operations'

export type AnswerCheck = {
  /** The message the server computed this for (null: the session awaits no message). */
  j: number | null
  valid: boolean | null
  error: string | null
  svg: string | null
  match: boolean | null
}

/**
 * The expert's prediction checked while they type (`pxp.check-answer`: the same rules as sending,
 * RDKit's drawing of their reactants, Parley's MATCH). Nothing is written.
 */
export async function checkAnswerAction(sessionId: string, prediction: string): Promise<AnswerCheck | null> {
  const { data } = await runFormAction(checkPxpAnswer, { sessionId, prediction }, '')
  return data ? { j: data.j, valid: data.valid, error: data.error, svg: data.svg, match: data.match } : null
}
