'use client'

import { ActionForm, SelectField, SubmitButton } from '@/components/forms/action-form'
import { branchEpisodeAction } from '@/protocols/mint/ui/branch-actions'

/**
 * "Branch from here" at a feedback turn: a fork of the episode up to (not including) this feedback,
 * whose feedback seat is the viewer (default) or the run's feedback seat, so other feedback can be
 * given; the model resumes after it.
 */
export function BranchButton({ sessionId, turn }: { sessionId: string; turn: number }) {
  return (
    <details className="text-sm">
      <summary className="cursor-pointer text-brand-700">Branch from here (other feedback at turn {turn})</summary>
      <ActionForm action={branchEpisodeAction} className="mt-2 flex flex-wrap items-end gap-3">
        <input type="hidden" name="sessionId" value={sessionId} />
        <input type="hidden" name="turn" value={String(turn)} />
        <SelectField
          name="feedbackBy"
          label="New feedback by"
          options={[
            { value: 'me', label: 'Me (I write it on the branch’s page)' },
            { value: 'run', label: 'The run’s feedback seat' },
          ]}
        />
        <SubmitButton variant="secondary" pendingText="Branching…">
          Branch at turn {turn}
        </SubmitButton>
      </ActionForm>
    </details>
  )
}
