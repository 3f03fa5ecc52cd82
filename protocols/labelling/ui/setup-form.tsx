'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { SeatPicker } from '@/components/runs/seat-picker'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'
import { LABELLING_SEATS } from '@/protocols/labelling/core/protocol'
import { PAPER_BEST_VARIANT, TABLE2_ORDER } from '@/protocols/labelling/core/variants'

/** The 32 prompt variants in the paper's Table 2 order (R role, D description, N narrative, A aspects, M five judges). */
const VARIANTS = TABLE2_ORDER.map((code) => ({
  value: code,
  label: code === PAPER_BEST_VARIANT ? `${code} (the paper's best)` : code,
}))

const PRESETS = [
  { value: 'relevance-0-2', label: 'Relevance 0–2 (Thomas et al. 2024: the TREC-style scale, overall only)' },
  { value: 'relevance-0-2-aspects', label: 'Relevance 0–2 with aspects M (intent match) and T (trust) before O' },
  { value: 'yes-no-unsure', label: 'Yes / no / unsure (nominal, optional rationale)' },
]

/**
 * A labelling project: a dataset of items, the label schema (a preset, or a schema as JSON), how many
 * annotators label each item (one session per item and slot), and who annotates: any member who claims
 * a slot (never two slots of one item; the queue completes items first), a named person, or an LLM.
 */
export function LabellingSetupForm({ studyId, protocol, datasets, models, experts }: SetupFormProps) {
  const [slots, setSlots] = useState('3')
  const sets = datasets
    .filter((d) => d.kind === 'labelling-items')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.instances} items` }))
  if (!sets.length)
    return (
      <p className="text-sm text-stone-700">
        No items to label in this study yet: import a CSV or JSON Lines file of kind “Items to label” on the study page
        first.
      </p>
    )
  const decl = LABELLING_SEATS[0]
  return (
    <ActionForm action={createRunAction} className="max-w-3xl space-y-5">
      <SetupHiddenFields studyId={studyId} protocol={protocol} />
      <input type="hidden" name="distinctClaimants" value="true" />
      <input type="hidden" name="fillFirst" value={slots} />
      <Field name="name" label="Name" required maxLength={120} placeholder="e.g. relevance, 3 annotators" />
      <fieldset className="grid gap-3 sm:grid-cols-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Items</legend>
        <SelectField name="datasetId" label="Dataset" options={sets} />
        <Field name="sample" label="Only the first N items (optional)" type="number" />
        <label className="block text-sm font-medium text-stone-800">
          Annotators per item
          <input
            name="slots"
            type="number"
            min={1}
            max={20}
            value={slots}
            onChange={(e) => setSlots(e.target.value)}
            className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
          />
        </label>
      </fieldset>
      <fieldset className="space-y-3">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Label schema</legend>
        <SelectField name="preset" label="Preset" options={PRESETS} />
        <Field
          name="schemaJson"
          label="Or your own schema (JSON, optional: wins over the preset)"
          multiline
          hint='{"version": 1, "questions": [{"id", "text", "type": "ordinal" | "nominal", "options": [{"value", "label"}], "required"}], "overall"?, "rationale": "off" | "optional" | "required", "perTurn", "guidelines"}'
        />
      </fieldset>
      <SeatPicker
        decl={decl}
        models={models}
        people={experts}
        defaultWay="claimable"
        intro="Any member who takes part claims a slot (one slot of an item per person), a named person labels every item, or an LLM labels the whole project."
      />
      <fieldset className="space-y-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">When an LLM labels</legend>
        <SelectField
          name="variant"
          label="Prompt variant (Thomas et al., Figure 1)"
          options={VARIANTS}
          defaultValue={PAPER_BEST_VARIANT}
          hint="R role, D description, N narrative, A aspects M/T before O, M five simulated judges; used for query–document items under a 0–2 scale, a prompt built from the schema otherwise."
        />
      </fieldset>
      <DraftField />
      <SubmitButton pendingText="Creating…">Create run</SubmitButton>
    </ActionForm>
  )
}
