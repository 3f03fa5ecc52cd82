'use client'

import { claimSeatAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'

/**
 * Take a seat any eligible member may claim; the first to click gets it. With `open`, the session's
 * page opens once the seat is taken (from the work queue).
 */
export function ClaimSeat({
  sessionId,
  seat,
  label,
  open = false,
}: {
  sessionId: string
  seat: string
  label: string
  open?: boolean
}) {
  return (
    <ActionForm action={claimSeatAction} className="inline-block">
      <input type="hidden" name="sessionId" value={sessionId} />
      <input type="hidden" name="seat" value={seat} />
      {open && <input type="hidden" name="open" value="on" />}
      <SubmitButton variant="secondary" pendingText="Claiming…">
        Claim the {label} seat
      </SubmitButton>
    </ActionForm>
  )
}
