'use client'

import Link from 'next/link'
import { useState, useTransition } from 'react'
import type { SessionImportPageData } from '@/protocols/labelling/server/session-import-page'
import { importPickedSessions, type SessionImportAnswer } from '@/protocols/labelling/ui/session-import-actions'

/** The page's sessions with checkboxes (and one for the whole page), a dataset name, and Import. */
export function SessionPicker({ studyId, sessions }: { studyId: string; sessions: SessionImportPageData['sessions'] }) {
  const [picked, setPicked] = useState<Set<string>>(new Set())
  const [name, setName] = useState('')
  const [answer, setAnswer] = useState<SessionImportAnswer | null>(null)
  const [pending, start] = useTransition()
  const onPage = sessions.map((s) => s.id)
  const allOnPage = onPage.length > 0 && onPage.every((id) => picked.has(id))
  const toggle = (id: string) =>
    setPicked((p) => {
      const n = new Set(p)
      if (n.has(id)) n.delete(id)
      else n.add(id)
      return n
    })
  const togglePage = () =>
    setPicked((p) => {
      const n = new Set(p)
      for (const id of onPage) {
        if (allOnPage) n.delete(id)
        else n.add(id)
      }
      return n
    })
  function submit() {
    start(async () => {
      try {
        const a = await importPickedSessions({ studyId, name, sessionIds: [...picked] })
        setAnswer(a)
        if (a.ok) setPicked(new Set())
      } catch {
        setAnswer({ ok: false, error: 'The server could not be reached. Try again.' })
      }
    })
  }
  const nameError = answer && !answer.ok ? answer.fieldErrors?.name?.[0] : undefined
  return (
    <div className="space-y-3 text-sm">
      <table className="w-full text-left">
        <thead className="text-xs text-stone-500">
          <tr>
            <th className="w-8">
              <input type="checkbox" aria-label="Select all on this page" checked={allOnPage} onChange={togglePage} />
            </th>
            <th>Session</th>
            <th>Protocol</th>
            <th>Run</th>
            <th>Item</th>
            <th>State</th>
            <th>Messages</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => (
            <tr key={s.id} className="border-t border-stone-100">
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select session ${s.id}`}
                  checked={picked.has(s.id)}
                  onChange={() => toggle(s.id)}
                />
              </td>
              <td>
                <Link className="font-mono text-brand-700 underline" href={`/sessions/${s.id}`}>
                  {s.id.slice(-8)}
                </Link>
              </td>
              <td>{s.protocol}</td>
              <td>{s.runName ?? '—'}</td>
              <td>
                {s.task} · {s.repetition}:{s.position}
              </td>
              <td>{s.status}</td>
              <td>{s.messages}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="flex flex-wrap items-end gap-3">
        <label>
          Dataset name
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={200}
            aria-invalid={!!nameError}
            className="mt-1 block rounded-md border border-stone-300 px-2 py-1"
          />
        </label>
        <button
          type="button"
          disabled={pending || !picked.size}
          onClick={submit}
          className="rounded-md bg-brand-700 px-4 py-2 font-medium text-white disabled:opacity-50"
        >
          {pending ? 'Importing…' : `Import ${picked.size} session${picked.size === 1 ? '' : 's'}`}
        </button>
      </div>
      {answer?.ok ? (
        <p role="status">
          Imported {answer.items} sessions as a transcript dataset:{' '}
          <Link className="text-brand-700 underline" href={`/datasets/${answer.datasetId}`}>
            open it
          </Link>
          .
        </p>
      ) : answer ? (
        <p role="alert" className="text-red-700">
          {nameError ?? answer.error}
        </p>
      ) : null}
    </div>
  )
}
