'use client'

import { useEffect, useState } from 'react'
import { releaseSeatAction, renewLeaseAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'

/**
 * The viewer's claim of a claimable seat, on the turn page: a lease that lapses unless renewed, so
 * while this page is open it renews the claim a third of the lease apart (`sessions.heartbeat`); the
 * person can also give the seat back. When the claim is gone (it lapsed and someone took it, or it was
 * given back elsewhere) the page says so instead of letting them type a turn that would be refused.
 */
export function SeatLease({ sessionId, until, seconds }: { sessionId: string; until: string; seconds: number }) {
  const [leaseUntil, setLeaseUntil] = useState<string | null>(until)
  useEffect(() => {
    let stopped = false
    const renew = async () => {
      const next = await renewLeaseAction(sessionId).catch(() => undefined)
      if (!stopped && next !== undefined) setLeaseUntil(next)
    }
    // Renew at once when the tab comes back (a laptop woken from sleep), then every third of the lease.
    const onVisible = () => document.visibilityState === 'visible' && void renew()
    const timer = setInterval(renew, Math.max(1000, (seconds * 1000) / 3))
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      stopped = true
      clearInterval(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, [sessionId, seconds])
  if (!leaseUntil)
    return (
      <p className="text-sm text-amber-700" role="status" data-testid="lease-lost">
        Your claim of this seat lapsed or was given back; reload the page to claim it again if it is still free.
      </p>
    )
  return (
    <div className="flex flex-wrap items-center gap-3 text-xs text-stone-500" data-testid="seat-lease">
      <span>
        Your seat is held while this page is open (a claim lapses{' '}
        {seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`} after it closes).
      </span>
      <ActionForm action={releaseSeatAction} className="inline-block">
        <input type="hidden" name="sessionId" value={sessionId} />
        <SubmitButton variant="secondary" pendingText="Giving it back…">
          Give the seat back
        </SubmitButton>
      </ActionForm>
    </div>
  )
}
