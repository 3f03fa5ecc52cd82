'use client'

import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import { branchEpisodeAction } from '@/protocols/mint/ui/branch-actions'

/**
 * "Branch from here" at a feedback turn: a fork of the episode up to (not including) this feedback,
 * whose feedback seat is the viewer, so other feedback can be given; the model resumes after it.
 */
export function BranchButton({ sessionId, turn }: { sessionId: string; turn: number }) {
  return (
    <ActionForm action={branchEpisodeAction} className="inline-block">
      <input type="hidden" name="sessionId" value={sessionId} />
      <input type="hidden" name="turn" value={String(turn)} />
      <SubmitButton variant="secondary" pendingText="Branching…">
        Branch from here (other feedback at turn {turn})
      </SubmitButton>
    </ActionForm>
  )
}
