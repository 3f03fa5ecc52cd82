'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { AppError } from '@/lib/server/errors'
import { pluginFor } from '@/lib/server/engine/plugins'
import { runFormAction } from '@/lib/server/form-action'
import { formDataToObject } from '@/lib/server/form-data'
import { claimNext, claimSeat, releaseSeat, renewLease, saveDraft, submitTurn } from '@/lib/server/services/sessions'

/**
 * A person's turn, for every protocol. The turn form posts `sessionId`, `seq` (the message it
 * answers: a second send of the same message is refused, so a double click or a second tab stores
 * one message) and `protocol`, which only picks how the form's fields are read (`human.fromForm`);
 * `sessions.submit` validates the input with the session's own plugin and the protocol's rules.
 */
export async function submitTurnAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { protocol: named, sessionId, seq, ...fields } = formDataToObject(fd)
  const protocolId = typeof named === 'string' ? named : ''
  let input: unknown = fields
  try {
    if (protocolId) {
      const plugin = await pluginFor(protocolId)
      if (plugin.human.fromForm) input = plugin.human.fromForm(fields)
    }
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.message, fieldErrors: err.fieldErrors }
    return { ok: false, error: 'This turn could not be read; reload the page (your draft is kept).' }
  }
  const { state } = await runFormAction(submitTurn, { ...(input as Record<string, unknown>), sessionId, seq }, (d) =>
    d.done ? 'Sent. The session is over.' : 'Sent.',
  )
  if (typeof sessionId === 'string') revalidatePath(`/sessions/${sessionId}`)
  revalidatePath('/work')
  return state
}

/**
 * Take a seat any eligible member may claim (first come). From the work queue (`open` = on) the
 * person goes straight to the session: until they hold a seat, its page is not theirs to see.
 */
export async function claimSeatAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const sessionId = fd.get('sessionId')
  const { state, data } = await runFormAction(
    claimSeat,
    { sessionId, seat: fd.get('seat') },
    (d) => `You fill the ${d.seat} seat now.`,
  )
  if (typeof sessionId === 'string') revalidatePath(`/sessions/${sessionId}`)
  revalidatePath('/work')
  if (data && fd.get('open') === 'on') redirect(`/sessions/${data.sessionId}`)
  return state
}

/**
 * "Next": claim the next free seat of a run (`sessions.claim-next`, the queue's order, never a seat
 * someone else is claiming at the same moment) and open its session; with nothing left, say so.
 */
export async function claimNextAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(
    claimNext,
    { runId: fd.get('runId') },
    (d) => `You fill the ${d.seat} seat now.`,
  )
  revalidatePath('/work')
  if (data) redirect(`/sessions/${data.sessionId}`)
  return state
}

/**
 * Keep a person's unsent turn on the server (`sessions.save-draft`), for every protocol's turn form:
 * true when it is stored.
 */
export async function saveDraftAction(sessionId: string, seq: number, data: Record<string, unknown>): Promise<boolean> {
  const { state } = await runFormAction(saveDraft, { sessionId, seq, data }, '')
  return !!state?.ok
}

/**
 * Renew the viewer's claim of a seat (`sessions.heartbeat`), called by the open turn page a third of
 * the lease apart: when it now lapses (ISO), or null when the claim is gone (lapsed and taken, given back).
 */
export async function renewLeaseAction(sessionId: string): Promise<string | null> {
  const { data } = await runFormAction(renewLease, { sessionId }, '')
  return data?.leaseUntil ? new Date(data.leaseUntil).toISOString() : null
}

/** Give a claimed seat back (`sessions.release`); the work queue opens. */
export async function releaseSeatAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const sessionId = fd.get('sessionId')
  const { state, data } = await runFormAction(releaseSeat, { sessionId }, (d) => `You gave the ${d.seat} seat back.`)
  if (typeof sessionId === 'string') revalidatePath(`/sessions/${sessionId}`)
  revalidatePath('/work')
  if (data) redirect('/work')
  return state
}
