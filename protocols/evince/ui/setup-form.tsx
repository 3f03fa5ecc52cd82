'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { SeatPicker } from '@/components/runs/seat-picker'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'
import { EVINCE_SEATS } from '@/protocols/evince/core'

const seat = (name: 'A' | 'B') => EVINCE_SEATS.find((d) => d.name === name) as (typeof EVINCE_SEATS)[number]

/** A debater: the generic seat picker in the debate's words (an LLM with its temperature, or an expert). */
function DebaterFields({
  seat: name,
  models,
  experts,
  hint,
}: Omit<SetupFormProps, 'studyId' | 'protocol' | 'datasets' | 'extra'> & { seat: 'A' | 'B'; hint: string }) {
  return (
    <SeatPicker
      decl={seat(name)}
      models={models}
      people={experts}
      claimable={false}
      intro={hint}
      labels={{ human: 'A person (an expert of the study)' }}
      personLabel="Expert"
      temperatureDefault={name === 'A' ? '0.2' : '1.0'}
      temperatureHint="The paper pairs a low- with a high-temperature agent."
    />
  )
}

/**
 * An EVINCE debate run: a case set (one debate per case) or one case typed in, the two debaters (an
 * LLM or a person), the moderator's judge and the debate settings. Posts to the generic create action.
 */
export function EvinceSetupForm({ studyId, protocol, datasets, models, experts }: SetupFormProps) {
  const caseSets = datasets
    .filter((d) => d.kind === 'cases')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.instances} cases` }))
  const [source, setSource] = useState<'single' | 'set'>(caseSets.length ? 'set' : 'single')
  if (!models.length)
    return <p className="text-sm text-stone-700">No model to debate with: add an LLM connection first.</p>
  return (
    <ActionForm action={createRunAction} className="max-w-3xl space-y-5">
      <SetupHiddenFields studyId={studyId} protocol={protocol} />
      <Field name="name" label="Name" required maxLength={120} placeholder="e.g. GPT vs Claude, liver cases" />
      <fieldset className="space-y-3">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Cases</legend>
        <div className="flex gap-4 text-sm">
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="source"
              value="set"
              checked={source === 'set'}
              onChange={() => setSource('set')}
              disabled={!caseSets.length}
            />
            A case set (a batch: one debate per case, on the job queue)
          </label>
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="source"
              value="single"
              checked={source === 'single'}
              onChange={() => setSource('single')}
            />
            One case, typed in
          </label>
        </div>
        {source === 'set' ? (
          <div className="grid gap-3 sm:grid-cols-2">
            <SelectField name="datasetId" label="Case set" options={caseSets} />
            <Field name="sample" label="First N cases" type="number" hint="Empty = every case." />
            <label className="flex items-center gap-2 text-sm sm:col-span-2">
              <input type="checkbox" name="constrained" /> Constrain the labels to the case set's diagnoses (the paper's
              "constrained" setting)
            </label>
          </div>
        ) : (
          <div className="grid gap-3">
            <Field
              name="symptoms"
              label="Symptoms (the information set S)"
              multiline
              placeholder="itching, vomiting, fatigue, weight loss, high fever, yellowish skin, dark urine, abdominal pain"
            />
            <Field name="truth" label="Ground truth (optional; never shown to the debaters)" />
          </div>
        )}
      </fieldset>
      <div className="grid gap-4 lg:grid-cols-2">
        <DebaterFields
          seat="A"
          models={models}
          experts={experts}
          hint="Opens each round from the case (and B's latest answer)."
        />
        <DebaterFields
          seat="B"
          models={models}
          experts={experts}
          hint="Answers after seeing A's prediction and reasons."
        />
      </div>
      <fieldset className="grid gap-3 sm:grid-cols-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Moderator</legend>
        <SelectField
          name="judge"
          label="Judge model (CRIT and the final report, temperature 0)"
          options={[...models, { value: '', label: 'None: no CRIT scores, equal weights, no report' }]}
        />
        <Field name="judgeModelName" label="Judge model override" />
      </fieldset>
      <fieldset className="grid gap-3 sm:grid-cols-3">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Debate settings</legend>
        <Field name="k" label="Top-k" type="number" defaultValue="5" />
        <Field name="maxRounds" label="Max rounds" type="number" defaultValue="5" />
        <Field name="tau" label="Stop tolerance τ" type="number" defaultValue="0.01" />
        <Field name="deltaInitial" label="Contentiousness Δ₀" type="number" defaultValue="0.9" />
        <Field name="deltaDecay" label="Δ factor per round" type="number" defaultValue="0.75" />
        <Field name="deltaHold" label="Rounds held at Δ₀" type="number" defaultValue="2" />
        <Field name="epsilon" label="Smoothing ε (KL, CE)" type="number" defaultValue="0.001" />
        <div className="sm:col-span-2">
          <Field
            name="aliases"
            label="Label aliases (one per line: alias = label)"
            multiline
            placeholder={'HCV = Hepatitis C\nObstructive Jaundice = Jaundice'}
          />
        </div>
      </fieldset>
      <p className="text-xs text-stone-500">
        Stop rule: after each round the debate continues while WD does not rise, MI does not fall and CRIT does not fall
        (each within τ); it also stops when both agents hold the same distribution, when neither distribution moved more
        than τ, or at the maximum number of rounds. Metrics are in bits (log base 2).
      </p>
      <DraftField />
      <SubmitButton pendingText="Starting…">Start debate</SubmitButton>
    </ActionForm>
  )
}
