'use client'

import { dismissDatasetAction, importDatasetAction } from '@/app/actions/datasets'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { ActionState } from '@/lib/action-state'
import { uploadTooLargeMessage } from '@/lib/limits.mjs'
import type { UploadFormKind } from '@/lib/server/services/dataset-kinds'

const MB = 1024 * 1024

/**
 * The upload of any dataset kind the protocols declare (those without a form of their own): the kind,
 * the data file, and every kind's further files and fields, each labelled with what it is for (the
 * server reads those of the chosen kind and ignores the rest).
 */
export function ImportDatasetForm({
  studyId,
  maxUploadMb,
  kinds,
}: {
  studyId: string
  maxUploadMb: number
  kinds: UploadFormKind[]
}) {
  const attachments = [...new Map(kinds.flatMap((k) => k.attachments).map((a) => [a.field, a])).values()]
  const fields = [...new Map(kinds.flatMap((k) => k.fields).map((f) => [f.name, f])).values()]
  const accepts = [...new Set(kinds.flatMap((k) => k.accepts.split(',')))].join(',')
  // Files over the limit are refused here, before they are sent; the server checks the same limit
  // (and answers 413) for anything that arrives anyway.
  const action = async (prev: ActionState, fd: FormData): Promise<ActionState> => {
    const bytes = [fd.get('file'), ...attachments.flatMap((a) => fd.getAll(a.field))].reduce<number>(
      (n, f) => n + (f instanceof File ? f.size : 0),
      0,
    )
    if (bytes > maxUploadMb * MB) return { ok: false, error: uploadTooLargeMessage(bytes, maxUploadMb) }
    try {
      return await importDatasetAction(prev, fd)
    } catch {
      return {
        ok: false,
        error: `The server did not take the upload (at most ${maxUploadMb} MB in all). Nothing was imported; check the files and your connection, then try again.`,
      }
    }
  }
  return (
    <ActionForm action={action} resetOnSuccess>
      <input type="hidden" name="studyId" value={studyId} />
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Dataset name" required />
        <SelectField name="kind" label="Kind" options={kinds.map((k) => ({ value: k.kind, label: k.description }))} />
      </div>
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="ds-file">
          Data file (CSV or JSONL)
        </label>
        <input id="ds-file" name="file" type="file" accept={accepts} className="mt-1 block text-sm" />
      </div>
      {attachments.map((a) => (
        <div key={a.field}>
          <label className="block text-sm font-medium text-stone-800" htmlFor={`ds-${a.field}`}>
            {a.label}
          </label>
          <input
            id={`ds-${a.field}`}
            name={a.field}
            type="file"
            multiple={a.multiple}
            accept={a.accept}
            className="mt-1 block text-sm"
          />
        </div>
      ))}
      {fields.map((f) => (
        <Field key={f.name} name={f.name} label={f.label} placeholder={f.placeholder} multiline={f.multiline} />
      ))}
      <p className="text-xs text-stone-500">
        Every row is checked first; if any row has a problem nothing is imported and the lines are listed. Up to{' '}
        {maxUploadMb} MB per import; large files continue in the background with their progress shown here.
      </p>
      <SubmitButton pendingText="Importing…">Import dataset</SubmitButton>
    </ActionForm>
  )
}

/** Remove a failed import from the list (it holds nothing but its reason). */
export function DismissDatasetForm({ studyId, datasetId }: { studyId: string; datasetId: string }) {
  return (
    <ActionForm action={dismissDatasetAction} className="inline">
      <input type="hidden" name="studyId" value={studyId} />
      <input type="hidden" name="datasetId" value={datasetId} />
      <SubmitButton variant="secondary" pendingText="Dismissing…">
        Dismiss
      </SubmitButton>
    </ActionForm>
  )
}
