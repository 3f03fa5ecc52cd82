'use client'

import { startTransition, useActionState } from 'react'
import { experimentRunAction, retrySessionAction } from '@/app/actions/experiments'
import { Alert } from '@/components/ui/card'
import { cn } from '@/components/ui/cn'

const BUTTONS: Record<string, Array<{ intent: string; label: string; danger?: boolean }>> = {
  // Its sessions are still being created: no Start until they are all there.
  preparing: [{ intent: 'cancel', label: 'Cancel', danger: true }],
  draft: [
    { intent: 'start', label: 'Start' },
    { intent: 'cancel', label: 'Cancel', danger: true },
  ],
  running: [
    { intent: 'pause', label: 'Pause' },
    { intent: 'cancel', label: 'Cancel', danger: true },
  ],
  paused: [
    { intent: 'resume', label: 'Resume' },
    { intent: 'cancel', label: 'Cancel', danger: true },
  ],
}

/** Start / pause / resume / cancel, as the experiment's status allows. */
export function RunControls({ experimentId, status }: { experimentId: string; status: string }) {
  const [state, act, pending] = useActionState(experimentRunAction, null)
  const buttons = BUTTONS[status] ?? []
  if (!buttons.length && !state) return null
  return (
    <div className="flex flex-col items-end gap-2">
      <div className="flex gap-2">
        {buttons.map((b) => (
          <button
            key={b.intent}
            type="button"
            disabled={pending}
            onClick={() => {
              if (b.intent === 'cancel' && !window.confirm('Cancel this experiment? Sessions keep what they wrote.'))
                return
              const fd = new FormData()
              fd.set('experimentId', experimentId)
              fd.set('intent', b.intent)
              startTransition(() => act(fd))
            }}
            className={cn(
              'rounded-md px-3 py-1.5 text-sm font-medium disabled:opacity-60',
              b.danger
                ? 'border border-red-200 bg-white text-red-700 hover:bg-red-50'
                : 'bg-brand-600 text-white hover:bg-brand-700',
            )}
          >
            {b.label}
          </button>
        ))}
      </div>
      {state?.error && <Alert>{state.error}</Alert>}
    </div>
  )
}

/** Retry a stalled session (its failed step runs again from the same message). */
export function RetryButton({ sessionId, experimentId }: { sessionId: string; experimentId: string }) {
  const [state, act, pending] = useActionState(retrySessionAction, null)
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        disabled={pending}
        onClick={() => {
          const fd = new FormData()
          fd.set('sessionId', sessionId)
          fd.set('experimentId', experimentId)
          startTransition(() => act(fd))
        }}
        className="rounded border border-stone-300 bg-white px-2 py-0.5 text-xs font-medium hover:bg-stone-100 disabled:opacity-60"
      >
        {pending ? 'Retrying…' : 'Retry'}
      </button>
      {state?.error && <span className="text-xs text-red-700">{state.error}</span>}
    </span>
  )
}
