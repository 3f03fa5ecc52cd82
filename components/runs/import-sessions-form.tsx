'use client'

import Link from 'next/link'
import { importRunAction } from '@/app/actions/run-import'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { ActionState } from '@/lib/action-state'
import { uploadTooLargeMessage } from '@/lib/limits.mjs'

const MB = 1024 * 1024

export interface SessionImportKindView {
  kind: string
  protocol: string
  label: string
  description: string
  accepts: string
  fields: Array<{ name: string; label: string; placeholder?: string; multiline?: boolean }>
}

/**
 * Importing a file of finished sessions (any kind a protocol declares) as a run of the study: the kind,
 * the file and every kind's own fields, each labelled (the server reads those of the chosen kind). The
 * whole file is checked by the protocol's rules first; a refused line is named and nothing is stored.
 */
export function ImportSessionsForm({
  studyId,
  maxUploadMb,
  kinds,
}: {
  studyId: string
  maxUploadMb: number
  kinds: SessionImportKindView[]
}) {
  const fields = [...new Map(kinds.flatMap((k) => k.fields.map((f) => [f.name, f] as const))).values()]
  const accepts = [...new Set(kinds.flatMap((k) => k.accepts.split(',').filter(Boolean)))].join(',')
  const action = async (prev: ActionState, fd: FormData): Promise<ActionState> => {
    const file = fd.get('file')
    if (file instanceof File && file.size > maxUploadMb * MB)
      return { ok: false, error: uploadTooLargeMessage(file.size, maxUploadMb) }
    try {
      return await importRunAction(prev, fd)
    } catch {
      return {
        ok: false,
        error: `The server did not take the upload (at most ${maxUploadMb} MB). Nothing was imported; check the file and your connection, then try again.`,
      }
    }
  }
  return (
    <ActionForm
      action={action}
      resetOnSuccess
      render={(s) =>
        typeof s.data?.runId === 'string' ? (
          <p className="text-sm">
            <Link href={`/runs/${s.data.runId}`} className="text-brand-700 underline">
              Open the imported run
            </Link>
          </p>
        ) : null
      }
    >
      <input type="hidden" name="studyId" value={studyId} />
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Run name" required />
        <SelectField
          name="kind"
          label="Kind of file"
          options={kinds.map((k) => ({ value: k.kind, label: `${k.label} (${k.protocol})` }))}
        />
      </div>
      <ul className="list-disc pl-5 text-xs text-stone-600">
        {kinds.map((k) => (
          <li key={k.kind}>
            <span className="font-medium">{k.label}</span>: {k.description}
          </li>
        ))}
      </ul>
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="sessions-file">
          File of sessions
        </label>
        <input id="sessions-file" name="file" type="file" accept={accepts} className="mt-1 block text-sm" />
      </div>
      {fields.map((f) => (
        <Field key={f.name} name={f.name} label={f.label} placeholder={f.placeholder} multiline={f.multiline} />
      ))}
      <p className="text-xs text-stone-500">
        Every line is checked by the protocol’s rules before anything is stored; if one is refused, nothing is imported
        and its line number is shown. Up to {maxUploadMb} MB per file; a large file takes a little while.
      </p>
      <SubmitButton pendingText="Checking and importing every session…">Import trajectories</SubmitButton>
    </ActionForm>
  )
}
