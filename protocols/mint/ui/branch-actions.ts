'use server'

import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { branchEpisode } from '@/protocols/mint/server/branch'

/**
 * "Branch from here" on an episode's feedback turn: `mint.branch` checks the scope, the study write
 * access and the turn; the new branch's page follows (its feedback seat asks for the new feedback).
 */
export async function branchEpisodeAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(
    branchEpisode,
    { sessionId: fd.get('sessionId'), turn: fd.get('turn'), feedbackBy: fd.get('feedbackBy') ?? undefined },
    (d) => `Branched at turn ${d.turn}.`,
  )
  if (!data) return state
  redirect(`/sessions/${data.sessionId}`)
}
