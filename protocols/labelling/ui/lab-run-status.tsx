'use client'

import Link from 'next/link'
import { useEffect, useState, useTransition } from 'react'
import type { LabRunView } from '@/protocols/labelling/server/lab-runs'
import { labRunProgress, retryPromptLabRun } from '@/protocols/labelling/ui/prompt-lab-actions'

const POLL_MS = 2000

/**
 * A lab run's state: labels done / total per prompt while it runs (polled every 2 s through
 * `labelling.lab-runs.get`; the page reloads with its stored tables once it ends), the reason when it
 * failed, with Retry. A reload shows the same: everything comes from the stored lab run.
 */
export function LabRunStatus({ initial }: { initial: LabRunView }) {
  const [view, setView] = useState(initial)
  const [pollError, setPollError] = useState<string | null>(null)
  const [retryError, setRetryError] = useState<string | null>(null)
  const [pending, start] = useTransition()
  const active = view.status === 'queued' || view.status === 'running'

  useEffect(() => setView(initial), [initial])
  useEffect(() => {
    if (!active) return
    let stop = false
    const timer = setInterval(async () => {
      try {
        const r = await labRunProgress(view.id)
        if (stop) return
        setPollError(r.error)
        if (r.view) {
          setView(r.view)
          if (r.view.status === 'done' || r.view.status === 'failed') window.location.reload()
        }
      } catch {
        if (!stop) setPollError('The server could not be reached; trying again.')
      }
    }, POLL_MS)
    return () => {
      stop = true
      clearInterval(timer)
    }
  }, [active, view.id])

  const done = view.progress.reduce((a, p) => a + p.done, 0)
  const total = view.progress.reduce((a, p) => a + p.total, 0)
  return (
    <div className="space-y-2 text-sm">
      <p role="status">
        Lab run <span className="font-mono">{view.id}</span>: <strong>{view.status}</strong>
        {active ? ` · ${done} / ${total} labels` : ''}
        {view.attempts ? ` · retried ${view.attempts}×` : ''}
        {view.computeMs !== null && view.status === 'done' ? ` · tables in ${view.computeMs} ms` : ''}
      </p>
      {view.status === 'failed' ? (
        <div role="alert" className="rounded-md border border-red-300 bg-red-50 p-2 text-red-800">
          <p>Failed: {view.error ?? 'no reason recorded'}</p>
          <button
            type="button"
            disabled={pending}
            className="mt-1 rounded-md bg-brand-700 px-3 py-1 text-white disabled:opacity-50"
            onClick={() =>
              start(async () => {
                try {
                  const r = await retryPromptLabRun(view.id)
                  setRetryError(r.error)
                  if (!r.error) {
                    setView({ ...view, status: 'queued', error: null })
                  }
                } catch {
                  setRetryError('The server could not be reached. Try again.')
                }
              })
            }
          >
            {pending ? 'Retrying…' : 'Retry'}
          </button>
          {retryError ? <p>{retryError}</p> : null}
        </div>
      ) : null}
      {pollError ? <p className="text-amber-700">{pollError}</p> : null}
      <table className="text-xs">
        <thead>
          <tr className="text-left text-stone-500">
            <th className="pr-3">Prompt</th>
            <th className="pr-3">Labels</th>
            <th className="pr-3">Run</th>
            <th>Failed</th>
          </tr>
        </thead>
        <tbody>
          {view.progress.map((p) => (
            <tr key={p.prompt}>
              <td className="pr-3 font-mono">{p.prompt}</td>
              <td className="pr-3">
                <progress max={p.total || 1} value={p.done} aria-label={`${p.prompt}: labels done`} /> {p.done} /{' '}
                {p.total}
              </td>
              <td className="pr-3">
                {p.runId ? (
                  <Link className="text-brand-700 underline" href={`/runs/${p.runId}`}>
                    {p.runStatus ?? 'run'}
                  </Link>
                ) : (
                  'not created yet'
                )}
              </td>
              <td className={p.stalled ? 'text-red-700' : ''}>
                {p.stalled ? `${p.stalled}: ${p.stallError ?? ''}` : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
