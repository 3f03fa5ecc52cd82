'use client'

import { type KeyboardEvent, useEffect, useMemo, useRef, useState } from 'react'
import { saveDraftAction, submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import { TurnHiddenFields } from '@/components/sessions/turn-fields'

type Row = { label: string; pct: number; justification: string }

/**
 * Rescale the other rows so the total stays 100% when row `i` is set to `value` (in percent).
 * If the others hold nothing, the rest goes to the first other row.
 */
export function rebalance(rows: Row[], i: number, value: number): Row[] {
  const v = Math.max(0, Math.min(100, Number.isFinite(value) ? value : 0))
  const others = rows.reduce((s, r, j) => (j === i ? s : s + r.pct), 0)
  const rest = 100 - v
  return rows.map((r, j) => {
    if (j === i) return { ...r, pct: v }
    if (others > 0) return { ...r, pct: (r.pct / others) * rest }
    const firstOther = i === 0 ? 1 : 0
    return { ...r, pct: j === firstOther ? rest : 0 }
  })
}

const round1 = (x: number) => Math.round(x * 10) / 10

/**
 * The human debater's top-k editor: labels, probabilities that always sum to 100% (changing one
 * rescales the others), a justification per label, arguments and counter-arguments. The draft is
 * kept on the server and in the browser until it is sent, so a reload, another browser or a refused
 * submission loses nothing.
 */
export function TurnEditor({
  sessionId,
  protocol,
  seq,
  k,
  round,
  initial,
  labels,
  serverDraft = null,
}: {
  sessionId: string
  protocol: string
  seq: number
  k: number
  round: number
  initial: Array<{ label: string; probability: number; justification?: string }>
  labels: string[]
  /** This turn's draft as the server keeps it (`sessions.save-draft`), when there is one. */
  serverDraft?: Record<string, unknown> | null
}) {
  const key = `parley:debate:${sessionId}:${seq}`
  const [rows, setRows] = useState<Row[]>(() =>
    initial.length
      ? initial
          .slice(0, k)
          .map((p) => ({ label: p.label, pct: p.probability * 100, justification: p.justification ?? '' }))
      : [{ label: '', pct: 100, justification: '' }],
  )
  const [args, setArgs] = useState('')
  const [counter, setCounter] = useState('')
  // The draft kept on the server (any browser) wins over this browser's copy; restored once, so a
  // refresh of the live page never overwrites what is being typed.
  const restored = useRef(false)
  const [touched, setTouched] = useState(false)
  useEffect(() => {
    if (restored.current) return
    restored.current = true
    try {
      const local = localStorage.getItem(key)
      const d = (serverDraft ?? (local ? JSON.parse(local) : null)) as Partial<{
        rows: Row[]
        args: string
        counter: string
      }> | null
      if (d && Array.isArray(d.rows) && d.rows.length) setRows(d.rows)
      if (typeof d?.args === 'string') setArgs(d.args)
      if (typeof d?.counter === 'string') setCounter(d.counter)
    } catch {}
  }, [key, serverDraft])
  useEffect(() => {
    try {
      localStorage.setItem(key, JSON.stringify({ rows, args, counter }))
    } catch {}
    if (!touched) return
    const t = setTimeout(() => {
      saveDraftAction(sessionId, seq, { rows, args, counter }).catch(() => {})
    }, 600)
    return () => clearTimeout(t)
  }, [key, sessionId, seq, rows, args, counter, touched])
  const total = rows.reduce((s, r) => s + r.pct, 0)
  const payload = useMemo(() => {
    // Rounded to 0.1% and the rounding remainder given to the largest row, so the sum is exact.
    const ps = rows.map((r) => round1(r.pct))
    const diff = round1(100 - ps.reduce((a, b) => a + b, 0))
    const top = ps.indexOf(Math.max(...ps))
    if (top >= 0) ps[top] = round1((ps[top] ?? 0) + diff)
    return JSON.stringify({
      predictions: rows.map((r, i) => ({
        label: r.label,
        probability: (ps[i] ?? 0) / 100,
        justification: r.justification,
      })),
      arguments: args
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean),
      counterArguments: counter
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean),
    })
  }, [rows, args, counter])
  // Enter in a field never sends a half-written turn; Ctrl/⌘+Enter sends it from anywhere.
  const onKeyDown = (e: KeyboardEvent<HTMLFieldSetElement>) => {
    if (e.key !== 'Enter') return
    const target = e.target as HTMLElement
    if (e.ctrlKey || e.metaKey) {
      e.preventDefault()
      target.closest('form')?.requestSubmit()
    } else if (target.tagName === 'INPUT') e.preventDefault()
  }
  const set = (i: number, patch: Partial<Row>) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)))
  return (
    <ActionForm action={submitTurnAction} className="space-y-3">
      <TurnHiddenFields session={{ id: sessionId, protocol }} seq={seq} />
      <input type="hidden" name="turn" value={payload} />
      <fieldset onKeyDown={onKeyDown} onInput={() => setTouched(true)} className="space-y-3">
        <legend className="sr-only">Your distribution and arguments</legend>
        <p className="text-sm text-stone-700">
          Your turn, round {round}: up to {k} diagnoses with probabilities. Changing one probability rescales the
          others, so they always sum to 100%.
        </p>
        {labels.length ? (
          <datalist id="debate-labels">
            {labels.map((l) => (
              <option key={l} value={l} />
            ))}
          </datalist>
        ) : null}
        <table className="w-full text-sm" aria-label="Your distribution">
          <thead>
            <tr className="text-left text-xs text-stone-500">
              <th className="pb-1 font-medium">Diagnosis</th>
              <th className="w-28 pb-1 font-medium">Probability %</th>
              <th className="pb-1 font-medium">Justification</th>
              <th className="w-8" />
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i} className="align-top">
                <td className="pr-2 pb-1">
                  <input
                    aria-label={`Diagnosis ${i + 1}`}
                    list={labels.length ? 'debate-labels' : undefined}
                    value={r.label}
                    onChange={(e) => set(i, { label: e.target.value })}
                    className="w-full rounded-md border border-stone-300 px-2 py-1"
                  />
                </td>
                <td className="pr-2 pb-1">
                  <input
                    aria-label={`Probability ${i + 1}`}
                    type="number"
                    min={0}
                    max={100}
                    step={1}
                    value={round1(r.pct)}
                    onChange={(e) => setRows((rs) => rebalance(rs, i, Number(e.target.value)))}
                    className="w-full rounded-md border border-stone-300 px-2 py-1 tabular-nums"
                  />
                </td>
                <td className="pr-2 pb-1">
                  <input
                    aria-label={`Justification ${i + 1}`}
                    value={r.justification}
                    onChange={(e) => set(i, { justification: e.target.value })}
                    className="w-full rounded-md border border-stone-300 px-2 py-1"
                  />
                </td>
                <td className="pb-1">
                  {rows.length > 1 ? (
                    <button
                      type="button"
                      aria-label={`Remove diagnosis ${i + 1}`}
                      className="rounded px-2 py-1 text-stone-500 hover:bg-stone-100"
                      onClick={() =>
                        setRows((rs) => {
                          const kept = rs.filter((_, j) => j !== i)
                          const s = kept.reduce((a, x) => a + x.pct, 0)
                          return kept.map((x, j) => ({ ...x, pct: s > 0 ? (x.pct / s) * 100 : j === 0 ? 100 : 0 }))
                        })
                      }
                    >
                      ×
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="flex items-center gap-3 text-sm">
          <button
            type="button"
            disabled={rows.length >= k}
            onClick={() => setRows((rs) => [...rs, { label: '', pct: 0, justification: '' }])}
            className="rounded-md border border-stone-300 px-2 py-1 hover:bg-stone-100 disabled:opacity-50"
          >
            Add diagnosis
          </button>
          <span className="tabular-nums text-stone-600" data-testid="turn-total">
            Total {round1(total)}%
          </span>
        </div>
        <label className="block text-sm">
          <span className="font-medium text-stone-800">Arguments for your distribution (one per line)</span>
          <textarea
            value={args}
            onChange={(e) => setArgs(e.target.value)}
            rows={3}
            className="mt-1 block w-full rounded-md border border-stone-300 px-2 py-1"
          />
        </label>
        <label className="block text-sm">
          <span className="font-medium text-stone-800">Counter-arguments to the other debater (one per line)</span>
          <textarea
            value={counter}
            onChange={(e) => setCounter(e.target.value)}
            rows={3}
            className="mt-1 block w-full rounded-md border border-stone-300 px-2 py-1"
          />
        </label>
      </fieldset>
      <div className="flex items-center gap-3">
        <SubmitButton pendingText="Sending…">Send my turn</SubmitButton>
        <span className="text-xs text-stone-500">
          or <kbd className="rounded border border-stone-300 px-1">Ctrl</kbd>+
          <kbd className="rounded border border-stone-300 px-1">Enter</kbd>; Enter alone never sends.
        </span>
      </div>
    </ActionForm>
  )
}
