'use client'

import {
  createContext,
  type FormEvent,
  type ReactNode,
  startTransition,
  useActionState,
  useContext,
  useId,
  useState,
} from 'react'
import type { ActionState } from '@/lib/action-state'
import { Alert } from '@/components/ui/card'
import { cn } from '@/components/ui/cn'

type FormAction = (state: ActionState, formData: FormData) => Promise<ActionState>

const FieldErrorsContext = createContext<Record<string, string[]> | undefined>(undefined)
const PendingContext = createContext(false)

/** A form bound to a server action: shows the action's error, field errors and success message. */
export function ActionForm({
  action,
  children,
  className,
  resetOnSuccess = false,
  render,
  validate,
}: {
  action: FormAction
  children: ReactNode
  className?: string
  resetOnSuccess?: boolean
  /** Extra output after a successful submit (e.g. the one-time API key). */
  render?: (state: NonNullable<ActionState>) => ReactNode
  /** Checked before sending: a message refuses the submission (nothing is sent, nothing is lost). */
  validate?: () => string | null
}) {
  const [state, formAction, pending] = useActionState(action, null)
  const [refused, setRefused] = useState<string | null>(null)
  // Submitting through a transition (not the form's `action` prop) keeps what the person typed when
  // the server says no: React resets a form after an action-prop submission, losing their input.
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    // One submission at a time: a second Enter or click while the first is in flight does nothing.
    if (pending) return
    const problem = validate?.() ?? null
    setRefused(problem)
    if (problem) return
    const data = new FormData(e.currentTarget)
    startTransition(() => formAction(data))
  }
  // A refusal stands only while its problem does: once fixed (a SMILES made valid) it goes, without
  // waiting for the next submission; while another problem remains, that one is shown.
  const refusal = refused ? (validate?.() ?? null) : null
  return (
    <form
      onSubmit={onSubmit}
      aria-busy={pending}
      className={cn('space-y-3', className)}
      key={resetOnSuccess && state?.ok ? JSON.stringify(state) : undefined}
      noValidate
    >
      {refused ? refusal && <Alert>{refusal}</Alert> : state?.error && <Alert>{state.error}</Alert>}
      {state?.ok && state.message && <Alert tone="success">{state.message}</Alert>}
      <FieldErrorsContext.Provider value={state?.ok ? undefined : state?.fieldErrors}>
        <PendingContext.Provider value={pending}>{children}</PendingContext.Provider>
      </FieldErrorsContext.Provider>
      {state?.ok && render?.(state)}
    </form>
  )
}

export function Field({
  name,
  label,
  hint,
  type = 'text',
  defaultValue,
  required,
  autoComplete,
  multiline,
  placeholder,
  maxLength,
}: {
  name: string
  label: string
  hint?: string
  type?: string
  defaultValue?: string
  required?: boolean
  autoComplete?: string
  multiline?: boolean
  placeholder?: string
  maxLength?: number
}) {
  const id = useId()
  const errors = useContext(FieldErrorsContext)?.[name]
  const describedBy = [hint ? `${id}-hint` : '', errors ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined
  const cls = cn(
    'mt-1 block w-full rounded-md border bg-white px-3 py-1.5 text-sm shadow-sm',
    errors ? 'border-red-400' : 'border-stone-300',
  )
  const common = {
    id,
    name,
    defaultValue,
    required,
    placeholder,
    maxLength,
    'aria-invalid': errors ? true : undefined,
    'aria-describedby': describedBy,
    className: cls,
  }
  return (
    <div>
      <label htmlFor={id} className="block text-sm font-medium text-stone-800">
        {label}
        {required && (
          <span aria-hidden="true" className="text-red-600">
            {' '}
            *
          </span>
        )}
      </label>
      {multiline ? <textarea rows={4} {...common} /> : <input type={type} autoComplete={autoComplete} {...common} />}
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-stone-500">
          {hint}
        </p>
      )}
      {errors && (
        <p id={`${id}-err`} className="mt-1 text-xs text-red-700">
          {errors.join(' ')}
        </p>
      )}
    </div>
  )
}

export function SelectField({
  name,
  label,
  options,
  defaultValue,
  hint,
}: {
  name: string
  label: string
  options: Array<{ value: string; label: string }>
  defaultValue?: string
  hint?: string
}) {
  const id = useId()
  const errors = useContext(FieldErrorsContext)?.[name]
  return (
    <div>
      <label htmlFor={id} className="block text-sm font-medium text-stone-800">
        {label}
      </label>
      <select
        id={id}
        name={name}
        defaultValue={defaultValue}
        aria-invalid={errors ? true : undefined}
        className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm"
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {hint && <p className="mt-1 text-xs text-stone-500">{hint}</p>}
      {errors && <p className="mt-1 text-xs text-red-700">{errors.join(' ')}</p>}
    </div>
  )
}

export function SubmitButton({
  children,
  variant = 'primary',
  pendingText,
}: {
  children: ReactNode
  variant?: 'primary' | 'secondary' | 'danger'
  pendingText?: string
}) {
  const pending = useContext(PendingContext)
  const styles = {
    primary: 'bg-brand-600 text-white hover:bg-brand-700 disabled:bg-brand-600/60',
    secondary: 'border border-stone-300 bg-white text-stone-800 hover:bg-stone-100',
    danger: 'border border-red-200 bg-white text-red-700 hover:bg-red-50',
  }
  return (
    <button
      type="submit"
      disabled={pending}
      aria-disabled={pending}
      className={cn('inline-flex items-center rounded-md px-3 py-1.5 text-sm font-medium', styles[variant])}
    >
      {pending ? (pendingText ?? 'Working…') : children}
    </button>
  )
}

/** True while the surrounding ActionForm's submission is in flight. */
export function useFormPending(): boolean {
  return useContext(PendingContext)
}
