'use client'

import { claimSeatAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'

/** Take a seat any eligible member may claim; the first to click gets it. */
export function ClaimSeat({ sessionId, seat, label }: { sessionId: string; seat: string; label: string }) {
  return (
    <ActionForm action={claimSeatAction} className="inline-block">
      <input type="hidden" name="sessionId" value={sessionId} />
      <input type="hidden" name="seat" value={seat} />
      <SubmitButton variant="secondary" pendingText="Claiming…">
        Claim the {label} seat
      </SubmitButton>
    </ActionForm>
  )
}
