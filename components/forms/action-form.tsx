'use client'

import {
  createContext,
  type FormEvent,
  type ReactNode,
  startTransition,
  useActionState,
  useContext,
  useId,
  useLayoutEffect,
  useRef,
  useState,
} from 'react'
import type { ActionState } from '@/lib/action-state'
import { Alert } from '@/components/ui/card'
import { cn } from '@/components/ui/cn'

type FormAction = (state: ActionState, formData: FormData) => Promise<ActionState>

export const FieldErrorsContext = createContext<Record<string, string[]> | undefined>(undefined)
const PendingContext = createContext(false)

/** What the form says when the server could not be reached (the request never got an answer). */
export const UNREACHABLE =
  'Parley could not be reached, so nothing was sent. Check your connection; what you entered is still here.'

/**
 * The request failed on the way (offline, the server restarting, a proxy's error page): `fetch`
 * rejects with a TypeError, and Next's action client throws this message for an answer that is not
 * its own. Errors the action itself raised (and Next's redirects, not-found …) carry a `digest` and
 * are thrown on as before.
 */
function unreachable(err: unknown): boolean {
  if (!(err instanceof Error) || 'digest' in err) return false
  return err instanceof TypeError || err.message === 'An unexpected response was received from the server.'
}

/** The messages of the field errors not shown beside a field of the form, with a label for each. */
type Unshown = Array<{ name: string; label: string; message: string }>

function labelOf(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name)
  const first = el instanceof RadioNodeList ? (el[0] as HTMLElement | undefined) : (el as HTMLElement | null)
  if (!first) return name
  const text = (node: Element | null | undefined) => node?.textContent?.replace(/\s*\*$/, '').trim()
  const legend = first.closest('fieldset')?.querySelector('legend')
  const label =
    first instanceof HTMLInputElement && first.type === 'radio' ? null : (first as HTMLInputElement).labels?.[0]
  return text(label) || text(legend) || name
}

/**
 * A form bound to a server action: shows the action's error, field errors and success message.
 * A field's error is shown once, beside the field (the error above the form only names what has no
 * field), and the first field in error takes the focus, so the view moves to it. When the server
 * cannot be reached, the form keeps what was typed and offers Retry (the same submission again).
 */
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
  // A request that never got an answer becomes a state, not an error thrown at the page (which
  // would replace the whole page, and the person's text, with the error screen).
  const [state, formAction, pending] = useActionState(async (prev: ActionState, data: FormData) => {
    try {
      return await action(prev, data)
    } catch (err) {
      if (unreachable(err)) return { ok: false, error: UNREACHABLE, retry: true } satisfies ActionState
      throw err
    }
  }, null)
  const [refused, setRefused] = useState<string | null>(null)
  const [unshown, setUnshown] = useState<{ for: ActionState; items: Unshown } | null>(null)
  const form = useRef<HTMLFormElement>(null)
  const alert = useRef<HTMLDivElement>(null)
  const lastSent = useRef<FormData | null>(null)
  const send = (data: FormData) => {
    lastSent.current = data
    startTransition(() => formAction(data))
  }
  // Submitting through a transition (not the form's `action` prop) keeps what the person typed when
  // the server says no: React resets a form after an action-prop submission, losing their input.
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    // One submission at a time: a second Enter or click while the first is in flight does nothing.
    if (pending) return
    const problem = validate?.() ?? null
    setRefused(problem)
    if (problem) return
    send(new FormData(e.currentTarget))
  }
  // A refusal stands only while its problem does: once fixed (a SMILES made valid) it goes, without
  // waiting for the next submission; while another problem remains, that one is shown.
  const refusal = refused ? (validate?.() ?? null) : null
  const fieldErrors = state && !state.ok ? state.fieldErrors : undefined
  // After a refusal: which field errors have no field to sit beside (they go above the form), and
  // the focus to the first field in error, or the view to the message when no field is in error.
  useLayoutEffect(() => {
    const f = form.current
    if (!f || !state || state.ok) return
    const shown = new Set([...f.querySelectorAll<HTMLElement>('[data-field-error]')].map((el) => el.dataset.fieldError))
    const items: Unshown = []
    for (const [name, messages] of Object.entries(state.fieldErrors ?? {}))
      if (!shown.has(name)) for (const message of messages) items.push({ name, label: labelOf(f, name), message })
    setUnshown({ for: state, items })
    const first = f.querySelector<HTMLElement>('[aria-invalid="true"]')
    if (first) {
      first.focus({ preventScroll: true })
      first.scrollIntoView({ block: 'center' })
    } else alert.current?.scrollIntoView({ block: 'nearest' })
  }, [state])
  const measured = unshown?.for === state ? unshown.items : []
  const shownMessages = new Set(
    Object.entries(fieldErrors ?? {})
      .filter(([name]) => !measured.some((u) => u.name === name))
      .flatMap(([, m]) => m),
  )
  // The error above the form, unless it only repeats what the fields say.
  const error =
    state && !state.ok && state.error && !state.fieldsOnly && !shownMessages.has(state.error) ? state.error : null
  return (
    <form
      ref={form}
      onSubmit={onSubmit}
      aria-busy={pending}
      className={cn('space-y-3', className)}
      key={resetOnSuccess && state?.ok ? JSON.stringify(state) : undefined}
      noValidate
    >
      {refused ? (
        refusal && <Alert>{refusal}</Alert>
      ) : error || measured.length ? (
        <div ref={alert}>
          <Alert>
            {error}
            {measured.length ? (
              <ul className={cn(error ? 'mt-1' : '', 'list-none')}>
                {measured.map((u) => (
                  <li key={`${u.name}:${u.message}`}>
                    {u.label}: {u.message}
                  </li>
                ))}
              </ul>
            ) : null}
            {state?.retry && lastSent.current ? (
              <button
                type="button"
                disabled={pending}
                onClick={() => lastSent.current && send(lastSent.current)}
                className="ml-2 rounded-md border border-red-300 bg-white px-2 py-0.5 text-sm font-medium text-red-800 hover:bg-red-100"
              >
                {pending ? 'Retrying…' : 'Retry'}
              </button>
            ) : null}
          </Alert>
        </div>
      ) : null}
      {state?.ok && state.message && <Alert tone="success">{state.message}</Alert>}
      <FieldErrorsContext.Provider value={fieldErrors}>
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
        <p id={`${id}-err`} data-field-error={name} className="mt-1 text-xs text-red-700">
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
        aria-describedby={[hint ? `${id}-hint` : '', errors ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined}
        className={cn(
          'mt-1 block w-full rounded-md border bg-white px-3 py-1.5 text-sm shadow-sm',
          errors ? 'border-red-400' : 'border-stone-300',
        )}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-stone-500">
          {hint}
        </p>
      )}
      {errors && (
        <p id={`${id}-err`} data-field-error={name} className="mt-1 text-xs text-red-700">
          {errors.join(' ')}
        </p>
      )}
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
