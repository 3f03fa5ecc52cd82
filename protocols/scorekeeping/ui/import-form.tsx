'use client'

import { useState } from 'react'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'
import { importClembenchAction } from '@/protocols/scorekeeping/ui/actions'

/**
 * clembench's scorekeeping ("privateshared") instances for this study: the game folder as a zip, as
 * clembench keeps it (in/instances.json and resources/), or generated from its slot values with a seed.
 */
export function ImportClembenchForm({ studyId }: { studyId: string }) {
  const [mode, setMode] = useState<'import' | 'generate'>('import')
  return (
    <ActionForm action={importClembenchAction} resetOnSuccess className="space-y-3">
      <h3 className="text-sm font-semibold text-stone-900">Import clembench game (scorekeeping)</h3>
      <input type="hidden" name="studyId" value={studyId} />
      <div className="flex gap-4 text-sm">
        <label className="flex items-center gap-2">
          <input
            type="radio"
            name="mode"
            value="import"
            checked={mode === 'import'}
            onChange={() => setMode('import')}
          />
          Import instances
        </label>
        <label className="flex items-center gap-2">
          <input
            type="radio"
            name="mode"
            value="generate"
            checked={mode === 'generate'}
            onChange={() => setMode('generate')}
          />
          Generate new instances
        </label>
      </div>
      <Field name="name" label="Name" required maxLength={120} placeholder="clembench privateshared" />
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="clem-file">
          The game folder as a zip (in/ and resources/), or an instances JSON file
        </label>
        <input id="clem-file" name="file" type="file" accept=".zip,.json" className="mt-1 block text-sm" />
      </div>
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="clem-resources">
          The resources as a zip (only with an instances file)
        </label>
        <input id="clem-resources" name="resources" type="file" accept=".zip" className="mt-1 block text-sm" />
      </div>
      {mode === 'import' ? (
        <Field
          name="instancesFile"
          label="Instance file in the zip"
          placeholder="in/instances.json"
          hint="An older set, e.g. in/instances_v0.9.json, works too."
        />
      ) : (
        <div className="grid gap-3 sm:grid-cols-3">
          <Field name="experiment" label="Run" placeholder="travel-booking" />
          <Field name="count" label="Instances" type="number" defaultValue="10" />
          <Field name="seed" label="Seed" type="number" defaultValue="42" />
        </div>
      )}
      <SubmitButton pendingText="Importing…">{mode === 'import' ? 'Import' : 'Generate'}</SubmitButton>
    </ActionForm>
  )
}
