'use client'

import { useRouter } from 'next/navigation'
import { useId, useState, useTransition } from 'react'
import { adjudicateAction } from '@/protocols/labelling/ui/actions'

type Value = string | number

/** Set an item's final label with a note (`labelling.adjudicate`); the page reloads its data after. */
export function AdjudicateForm({
  runId,
  position,
  question,
  options,
  current,
}: {
  runId: string
  position: number
  question: string
  options: Array<{ value: Value; label: string }>
  current: { value: unknown; note: string } | null
}) {
  const id = useId()
  const router = useRouter()
  const [pending, start] = useTransition()
  const [error, setError] = useState<string | null>(null)
  const [saved, setSaved] = useState(false)
  return (
    <form
      className="mt-3 flex flex-wrap items-end gap-3 text-sm"
      onSubmit={(e) => {
        e.preventDefault()
        const f = new FormData(e.currentTarget)
        const raw = String(f.get('value') ?? '')
        const option = options.find((o) => String(o.value) === raw)
        setError(null)
        setSaved(false)
        start(async () => {
          const r = await adjudicateAction({
            runId,
            position,
            question,
            value: option ? option.value : raw,
            note: String(f.get('note') ?? ''),
          })
          if (!r.ok) setError(r.error)
          else {
            setSaved(true)
            router.refresh()
          }
        })
      }}
    >
      <label className="block" htmlFor={`${id}-v`}>
        <span className="block font-medium text-stone-800">Final label</span>
        <select
          id={`${id}-v`}
          name="value"
          required
          defaultValue={current ? String(current.value) : ''}
          className="mt-1 rounded-md border border-stone-300 bg-white px-2 py-1.5"
        >
          <option value="" disabled>
            Choose…
          </option>
          {options.map((o) => (
            <option key={String(o.value)} value={String(o.value)}>
              {String(o.value)} — {o.label}
            </option>
          ))}
        </select>
      </label>
      <label className="block min-w-64 flex-1" htmlFor={`${id}-n`}>
        <span className="block font-medium text-stone-800">Note (why)</span>
        <input
          id={`${id}-n`}
          name="note"
          required
          maxLength={4000}
          defaultValue={current?.note ?? ''}
          className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-2 py-1.5"
        />
      </label>
      <button
        type="submit"
        disabled={pending}
        className="rounded-md bg-brand-700 px-3 py-1.5 font-medium text-white hover:bg-brand-800 disabled:opacity-60"
      >
        {pending ? 'Saving…' : current ? 'Change final label' : 'Set final label'}
      </button>
      {error ? (
        <p role="alert" className="w-full text-red-700">
          {error}
        </p>
      ) : null}
      {saved ? (
        <p role="status" className="w-full text-green-700">
          Saved.
        </p>
      ) : null}
    </form>
  )
}
