'use client'

import Link from 'next/link'
import { useState } from 'react'

export interface CompareChoice {
  id: string
  name: string
  protocol: string
  protocolLabel: string
  study: { name: string }
  /** What the run compares with: two runs compare when protocol and key are equal (the plugin says). */
  comparable: { key: string; label: string }
}

const sameKind = (a: CompareChoice, b: CompareChoice) =>
  a.protocol === b.protocol && a.comparable.key === b.comparable.key && a.id !== b.id

function RunSelect({
  name,
  label,
  runs,
  value,
  onChange,
}: {
  name: string
  label: string
  runs: CompareChoice[]
  value: string
  onChange: (id: string) => void
}) {
  return (
    <label className="flex min-w-72 max-w-full flex-col text-sm">
      <span className="text-xs text-stone-600">{label}</span>
      <select
        name={name}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        className="max-w-full rounded-md border border-stone-300 bg-white px-3 py-1.5"
        required
      >
        <option value="" disabled>
          Choose a run…
        </option>
        {runs.map((r) => (
          <option key={r.id} value={r.id}>
            {r.name} · {r.protocolLabel}
            {r.comparable.label ? ` (${r.comparable.label})` : ''} · {r.study.name}
          </option>
        ))}
      </select>
    </label>
  )
}

/**
 * Choose A, then B among the runs that compare with A (same protocol, and what the protocol's plugin
 * says compares: PXP runs on the same task), as A changes; the page compares them on submit.
 */
export function CompareForm({ runs, a: initialA, b: initialB }: { runs: CompareChoice[]; a?: string; b?: string }) {
  const [a, setA] = useState(initialA ?? '')
  const [b, setB] = useState(initialB ?? '')
  const runA = runs.find((r) => r.id === a)
  const choicesB = runA ? runs.filter((r) => sameKind(runA, r)) : runs
  const chooseA = (id: string) => {
    setA(id)
    const next = runs.find((r) => r.id === id)
    const current = runs.find((r) => r.id === b)
    if (next && current && !sameKind(next, current)) setB('')
  }
  return (
    <>
      <form className="flex flex-wrap items-end gap-3" action="/runs/compare">
        <RunSelect name="a" label="Run A" runs={runs} value={a} onChange={chooseA} />
        <RunSelect name="b" label="Run B (one that compares with A)" runs={choicesB} value={b} onChange={setB} />
        <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm">
          Compare
        </button>
        {initialA && initialB ? (
          <Link
            href={`/runs/compare?a=${initialB}&b=${initialA}`}
            className="self-center text-sm text-brand-700 underline"
          >
            Swap A and B
          </Link>
        ) : null}
      </form>
      {runA && !choicesB.length ? (
        <p className="mt-2 text-sm text-stone-600">
          No other {runA.protocolLabel} run{runA.comparable.label ? ` on ${runA.comparable.label}` : ''} to compare with
          yet.
        </p>
      ) : null}
    </>
  )
}
