'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { afterSessionDone } from '@/lib/server/jobs/pxp'
import { runPxpSession } from '@/lib/server/runner/pxp'
import { submitHumanMessage } from '@/lib/server/services/pxp-sessions'

/** The expert's message, then the machine's turn (the runner steps until the expert is needed again). */
export async function submitHumanMessageAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(submitHumanMessage, fd, (d) => `Sent as ${d.tag}.`)
  if (!data) return state
  // The machine answers in this request (the expert waits for it); a finished session lets its
  // experiment go on (the next session of a carried-over repetition) or close.
  const next = await runPxpSession(data.sessionId)
  if (next.kind === 'done') await afterSessionDone(data.sessionId)
  revalidatePath(`/sessions/${data.sessionId}`)
  revalidatePath('/sessions')
  if (next.kind === 'stalled')
    return { ok: true, message: `Sent as ${data.tag}. The machine could not answer: ${next.error}` }
  return state
}
