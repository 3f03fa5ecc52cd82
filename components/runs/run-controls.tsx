'use client'

import { startTransition, useActionState, useRef } from 'react'
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
 * Change model: one action moves every seat and helper on a connection (the one whose call failed in
 * the last stall is preselected), or one seat or helper alone, to another model for the run and its
 * unfinished sessions, and, when some are stalled, queues them again. A dialog as wide as the labels.
 */
export function ChangeSeatModel({
  runId,
  targets,
  defaultTarget,
  models,
  stalled,
}: {
  runId: string
  /** `from:<connectionId>` (every seat on it), "seat" or "seat/helper", each labelled with its model. */
  targets: Array<{ value: string; label: string }>
  defaultTarget?: string
  models: ModelChoice[]
  /** Stalled sessions of the run: Retry is offered (and checked) when there are any. */
  stalled: number
}) {
  const ref = useRef<HTMLDialogElement>(null)
  if (!targets.length || !models.length) return null
  return (
    <>
      <button
        type="button"
        onClick={() => ref.current?.showModal()}
        className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
      >
        Change model
      </button>
      <dialog
        ref={ref}
        aria-labelledby="change-model-title"
        className="m-auto w-[min(52rem,95vw)] rounded-lg p-0 shadow-xl backdrop:bg-black/30"
      >
        <div className="p-5">
          <h2 id="change-model-title" className="mb-3 text-base font-semibold">
            Change model
          </h2>
          <ActionForm action={changeSeatModelAction} className="grid gap-3">
            <input type="hidden" name="runId" value={runId} />
            <SelectField
              name="target"
              label="Replace"
              options={targets}
              defaultValue={defaultTarget}
              hint="Every seat and helper on a connection moves at once; or choose one alone. Finished sessions keep the model they ran with."
            />
            <SelectField name="model" label="New model" options={models} />
            <div className="grid gap-3 sm:grid-cols-2">
              <Field name="modelName" label="Model override" hint="Optional; the preset's or connection's otherwise." />
              <Field
                name="temperature"
                label="Temperature"
                type="number"
                hint="Optional; each seat keeps its own otherwise."
              />
            </div>
            {stalled > 0 && (
              <label className="flex items-center gap-2 text-sm">
                <input type="checkbox" name="retry" value="on" defaultChecked /> Retry the {stalled} stalled session
                {stalled === 1 ? '' : 's'} with the new model
              </label>
            )}
            <div className="flex items-center gap-3">
              <SubmitButton pendingText="Changing…">Change model</SubmitButton>
              <button type="button" onClick={() => ref.current?.close()} className="text-sm text-stone-600 underline">
                Close
              </button>
            </div>
          </ActionForm>
        </div>
      </dialog>
    </>
  )
}
