'use client'

import { startTransition, useActionState, useState } from 'react'
import { changeSeatModelAction, retrySessionAction, runControlAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { ModelChoice } from '@/components/protocols/types'
import { Alert } from '@/components/ui/card'
import { cn } from '@/components/ui/cn'

const BUTTONS: Record<string, Array<{ intent: string; label: string; danger?: boolean }>> = {
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

/** Start / pause / resume / cancel as the run's status allows, and Retry all stalled sessions. */
export function RunControls({ runId, status, stalled }: { runId: string; status: string; stalled: number }) {
  const [state, act, pending] = useActionState(runControlAction, null)
  const buttons = [
    ...(BUTTONS[status] ?? []),
    ...(stalled > 0 ? [{ intent: 'retry-stalled', label: 'Retry all stalled' }] : []),
  ]
  if (!buttons.length && !state) return null
  return (
    <div className="flex flex-col items-end gap-2">
      <div className="flex flex-wrap gap-2">
        {buttons.map((b) => (
          <button
            key={b.intent}
            type="button"
            disabled={pending}
            onClick={() => {
              if (b.intent === 'cancel' && !window.confirm('Cancel this run? Sessions keep what they wrote.')) return
              const fd = new FormData()
              fd.set('runId', runId)
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
      {state?.ok && state.message && <Alert tone="success">{state.message}</Alert>}
    </div>
  )
}

/** Retry a stalled session (its failed step runs again from the same message). */
export function RetryButton({ sessionId, runId }: { sessionId: string; runId: string }) {
  const [state, act, pending] = useActionState(retrySessionAction, null)
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        disabled={pending}
        onClick={() => {
          const fd = new FormData()
          fd.set('sessionId', sessionId)
          fd.set('runId', runId)
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

/**
 * Change the model of an LLM seat, or of a helper of a seat (a checker, a judge), for the run and
 * its unfinished sessions: e.g. after the model of a stalled run was retired.
 */
export function ChangeSeatModel({
  runId,
  targets,
  models,
}: {
  runId: string
  /** "seat" or "seat/helper", with a label naming the current model. */
  targets: Array<{ value: string; label: string }>
  models: ModelChoice[]
}) {
  const [open, setOpen] = useState(false)
  if (!targets.length || !models.length) return null
  if (!open)
    return (
      <button
        type="button"
        onClick={() => setOpen(true)}
        className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
      >
        Change model
      </button>
    )
  return (
    <ActionForm action={changeSeatModelAction} className="grid gap-3 sm:grid-cols-2">
      <input type="hidden" name="runId" value={runId} />
      <SelectField name="target" label="Seat" options={targets} />
      <SelectField name="model" label="New model" options={models} />
      <Field name="modelName" label="Model override" hint="Optional; the preset's or connection's otherwise." />
      <Field name="temperature" label="Temperature" type="number" hint="Optional." />
      <div className="flex items-center gap-3 sm:col-span-2">
        <SubmitButton pendingText="Changing…">Change model</SubmitButton>
        <button type="button" onClick={() => setOpen(false)} className="text-sm text-stone-600 underline">
          Close
        </button>
      </div>
    </ActionForm>
  )
}
