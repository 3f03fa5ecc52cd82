'use client'

import Link from 'next/link'
import { useRouter } from 'next/navigation'
import { useEffect, useRef, useState } from 'react'
import { claimNextAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'

const KEY = 'parley:auto-advance'
const SECONDS = 3

/**
 * Shown where the turn form was once a session ends: Next session (the first session awaiting the
 * person), and optionally going on to it by itself after a short countdown (a choice kept in this
 * browser; "Stay here" stops it). With `claim`, the next session is one offered to claim (the next
 * item of the run): with the run (`runId`), Next claims the run's next free seat in one step
 * (`sessions.claim-next`, so two people never race for it) and opens it; without, it opens the
 * offered session for the person to claim it.
 */
export function SessionOver({
  next,
  claim = false,
  runId = null,
}: {
  next: string | null
  claim?: boolean
  runId?: string | null
}) {
  const router = useRouter()
  const claimForm = useRef<HTMLDivElement>(null)
  const claimNext = claim && !!runId
  const [auto, setAuto] = useState(false)
  const [left, setLeft] = useState<number | null>(null)
  useEffect(() => {
    try {
      setAuto(localStorage.getItem(KEY) === 'on')
    } catch {}
  }, [])
  useEffect(() => {
    if (!auto || !next) {
      setLeft(null)
      return
    }
    setLeft(SECONDS)
    const tick = setInterval(() => setLeft((s) => (s === null ? s : Math.max(0, s - 1))), 1000)
    const go = setTimeout(
      () => (claimNext ? claimForm.current?.querySelector('form')?.requestSubmit() : router.push(`/sessions/${next}`)),
      SECONDS * 1000,
    )
    return () => {
      clearInterval(tick)
      clearTimeout(go)
    }
  }, [auto, next, router, claimNext])
  const choose = (on: boolean) => {
    setAuto(on)
    try {
      localStorage.setItem(KEY, on ? 'on' : 'off')
    } catch {}
  }
  return (
    <div className="space-y-2 text-sm" data-testid="session-over">
      <div className="flex flex-wrap items-center gap-3">
        {next && claimNext ? (
          <div ref={claimForm} className="inline-block">
            <ActionForm action={claimNextAction} className="inline-block">
              <input type="hidden" name="runId" value={runId ?? ''} />
              <SubmitButton pendingText="Claiming…">Next: claim the next one →</SubmitButton>
            </ActionForm>
          </div>
        ) : next ? (
          <Link href={`/sessions/${next}`} className="rounded-md bg-brand-600 px-3 py-1.5 font-medium text-white">
            {claim ? 'Next: claim the next one →' : 'Next session →'}
          </Link>
        ) : (
          <span>Nothing else is waiting for you.</span>
        )}
        <Link href="/work" className="text-brand-700 underline">
          Back to My work
        </Link>
      </div>
      <label className="flex items-center gap-2 text-xs text-stone-600">
        <input type="checkbox" checked={auto} onChange={(e) => choose(e.target.checked)} /> Open the next session by
        itself when a session ends
      </label>
      {left !== null && (
        <p role="status" className="text-xs text-stone-600">
          Opening the next session in {left} s…{' '}
          <button type="button" className="text-brand-700 underline" onClick={() => choose(false)}>
            Stay here
          </button>
        </p>
      )}
    </div>
  )
}
