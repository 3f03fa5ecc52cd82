'use client'

import { dismissDatasetAction, importDatasetAction } from '@/app/actions/datasets'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { ActionState } from '@/lib/action-state'
import { uploadTooLargeMessage } from '@/lib/limits.mjs'

const MB = 1024 * 1024

export function ImportDatasetForm({ studyId, maxUploadMb }: { studyId: string; maxUploadMb: number }) {
  // Files over the limit are refused here, before they are sent; the server checks the same limit
  // (and answers 413) for anything that arrives anyway.
  const action = async (prev: ActionState, fd: FormData): Promise<ActionState> => {
    const bytes = [fd.get('file'), ...fd.getAll('images')].reduce<number>(
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
        <SelectField
          name="kind"
          label="Kind"
          options={[
            { value: 'rad', label: 'RAD: X-ray label + report (case,label,img_path,report)' },
            { value: 'drug', label: 'DRUG: retrosynthesis (output,input,explanation)' },
            { value: 'generic', label: 'Generic CSV/JSONL with a column mapping' },
            { value: 'cases', label: 'Diagnosis cases for EVINCE debates (symptoms,label)' },
          ]}
        />
      </div>
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="ds-file">
          Data file (CSV or JSONL)
        </label>
        <input
          id="ds-file"
          name="file"
          type="file"
          accept=".csv,.jsonl,.json,text/csv"
          className="mt-1 block text-sm"
        />
      </div>
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="ds-images">
          Images (RAD): files or a zip
        </label>
        <input id="ds-images" name="images" type="file" multiple accept="image/*,.zip" className="mt-1 block text-sm" />
      </div>
      <Field
        name="mapping"
        label="Column mapping (generic only, JSON)"
        placeholder='{"inputColumns": ["question"], "predictionColumn": "answer", "explanationColumn": "rationale"}'
        multiline
      />
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
