'use client'

import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { SeatPicker } from '@/components/runs/seat-picker'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'
import { SCOREKEEPING_SEATS } from '@/protocols/scorekeeping/core'

/**
 * A scorekeeping run: a clembench dataset of the study (optionally some of its experiments), the
 * answerer (an LLM, a named person, or claimable by any member), and episodes per game instance.
 * The questioner is always clembench's programmatic game master.
 */
/** The answerer's declaration: the questioner is always the game master, so the form offers no choice for it. */
const answerer = SCOREKEEPING_SEATS.find((d) => d.name === 'answerer') as (typeof SCOREKEEPING_SEATS)[number]

export function ScorekeepingSetupForm({ studyId, protocol, datasets, models, experts }: SetupFormProps) {
  const games = datasets
    .filter((d) => d.kind === 'clembench')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.instances} games` }))
  if (!games.length)
    return (
      <p className="text-sm text-stone-700">
        No clembench games in this study yet: import clembench's game folder (or generate instances) on the study page
        first.
      </p>
    )
  return (
    <ActionForm action={createRunAction} className="max-w-3xl space-y-5">
      <SetupHiddenFields studyId={studyId} protocol={protocol} />
      <Field name="name" label="Name" required maxLength={120} placeholder="e.g. Llama 3 70B, temperature 0" />
      <fieldset className="grid gap-3 sm:grid-cols-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Games</legend>
        <SelectField name="datasetId" label="Game instances" options={games} />
        <Field
          name="experiments"
          label="Only these experiments (optional)"
          placeholder="travel-booking"
          hint="One experiment name; empty = every experiment of the dataset."
        />
        <Field
          name="repetitions"
          label="Episodes per game instance"
          type="number"
          defaultValue="1"
          hint="Each instance is played this many times."
        />
      </fieldset>
      <SeatPicker
        decl={answerer}
        models={models}
        people={experts}
        defaultWay={models.length ? 'llm' : 'claimable'}
        labels={{ claimable: 'Any member who claims a game (people, measured like the models)' }}
        intro="The answerer knows every slot; the questioner (the game master, a program) asks for them one by one and probes after each answer what the answerer thinks has been shared."
      />
      <DraftField />
      <SubmitButton pendingText="Creating…">Create run</SubmitButton>
    </ActionForm>
  )
}
