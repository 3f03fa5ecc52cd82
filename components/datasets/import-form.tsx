'use client'

import { importDatasetAction } from '@/app/actions/datasets'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'

export function ImportDatasetForm({ studyId }: { studyId: string }) {
  return (
    <ActionForm action={importDatasetAction} resetOnSuccess>
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
        Every row is checked first; if any row has a problem nothing is imported and the lines are listed.
      </p>
      <SubmitButton pendingText="Importing…">Import dataset</SubmitButton>
    </ActionForm>
  )
}
