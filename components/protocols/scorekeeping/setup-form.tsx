'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'

/**
 * A scorekeeping run: a clembench dataset of the study (optionally some of its experiments), the
 * answerer (an LLM, a named person, or claimable by any member), and episodes per game instance.
 * The questioner is always clembench's programmatic game master.
 */
export function ScorekeepingSetupForm({ studyId, protocol, datasets, models, experts }: SetupFormProps) {
  const games = datasets
    .filter((d) => d.kind === 'clembench')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.instances} games` }))
  const [who, setWho] = useState<'llm' | 'human' | 'claimable'>(models.length ? 'llm' : 'claimable')
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
      <fieldset className="space-y-3 rounded-md border border-stone-200 p-3">
        <legend className="px-1 text-sm font-semibold text-stone-900">Answerer</legend>
        <p className="text-xs text-stone-500">
          The answerer knows every slot; the questioner (the game master, a program) asks for them one by one and probes
          after each answer what the answerer thinks has been shared.
        </p>
        <div className="flex flex-wrap gap-4 text-sm">
          {(
            [
              ['llm', 'An LLM', models.length === 0],
              ['human', 'A person of the study', experts.length === 0],
              ['claimable', 'Any member who claims a game (people, measured like the models)', false],
            ] as const
          ).map(([value, label, disabled]) => (
            <label key={value} className="flex items-center gap-2">
              <input
                type="radio"
                name="answererKind"
                value={value}
                checked={who === value}
                disabled={disabled}
                onChange={() => setWho(value)}
              />
              {label}
            </label>
          ))}
        </div>
        {who === 'llm' ? (
          <div className="grid gap-3 sm:grid-cols-3">
            <div className="sm:col-span-3">
              <SelectField name="answererModel" label="Model" options={models} />
            </div>
            <Field name="answererModelName" label="Model override" hint="Optional." />
            <Field name="temperature" label="Temperature" type="number" defaultValue="0" />
          </div>
        ) : who === 'human' ? (
          <SelectField name="answererUser" label="Person" options={experts} />
        ) : (
          <p className="text-sm text-stone-600">
            Every episode appears in the members' work queues until someone claims it.
          </p>
        )}
      </fieldset>
      <DraftField />
      <SubmitButton pendingText="Creating…">Create run</SubmitButton>
    </ActionForm>
  )
}
