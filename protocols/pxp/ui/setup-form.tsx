'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { Choice, SetupFormProps } from '@/components/protocols/types'
import { SeatHelpers, SeatPicker, type SeatWay } from '@/components/runs/seat-picker'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'
import { PXP_SEAT_DECLS } from '@/protocols/pxp/core'

/** PXP runs on RAD, DRUG and generic datasets (a generic one with a task template). */
const KINDS = new Set(['rad', 'drug', 'generic'])

/** PXP's two seats, as the protocol declares them. */
const seat = (name: 'm' | 'h') => PXP_SEAT_DECLS.find((d) => d.name === name) as (typeof PXP_SEAT_DECLS)[number]

/**
 * A PXP experiment: the dataset (or its first N instances), who fills the machine and tester seats
 * (the generic seat pickers: an LLM, the proxy, or experts taking the sessions round robin) with the
 * AGREE checker asked once for both, n, k, R, carry-over and the order. Posts to the generic create
 * action (the plugin's `fromForm` makes the one run-create body).
 */
export function PxpSetupForm({ studyId, protocol, datasets: all, models, experts, extra }: SetupFormProps) {
  const templates = (extra.templates as Choice[] | undefined) ?? []
  const [tester, setTester] = useState<SeatWay>('proxy')
  const [machine, setMachine] = useState<SeatWay>('llm')
  const datasets = all
    .filter((d) => KINDS.has(d.kind))
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.kind.toUpperCase()} · ${d.instances} instances` }))
  if (!datasets.length)
    return (
      <p className="text-sm text-stone-700">
        This study has no RAD, DRUG or generic dataset yet: import one on the study page.
      </p>
    )
  return (
    <ActionForm action={createRunAction} className="max-w-3xl space-y-5">
      <SetupHiddenFields studyId={studyId} protocol={protocol} />
      <Field name="name" label="Name" required maxLength={120} placeholder="e.g. RAD proxy pilot, R = 5" />
      <fieldset className="grid gap-4 sm:grid-cols-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Data</legend>
        <SelectField name="datasetId" label="Dataset" options={datasets} />
        <SelectField
          name="templateId"
          label="Task template (generic datasets)"
          options={[
            { value: '', label: templates.length ? '— for RAD and DRUG, none —' : 'No templates in this study' },
            ...templates,
          ]}
          hint="RAD and DRUG have built-in tasks; a generic dataset needs a template."
        />
        <Field
          name="sample"
          label="Sample (first N instances)"
          type="number"
          hint="Leave empty to use every instance."
        />
      </fieldset>
      <SeatPicker
        decl={seat('m')}
        models={models}
        people={experts}
        claimable={false}
        roundRobin
        sharedHelpers
        way={machine}
        onWayChange={(way) => {
          setMachine(way)
          // Experts cannot sit on both sides: the tester becomes an LLM.
          if (way === 'human' && tester === 'human') setTester('llm')
        }}
        labels={{ llm: 'The LLM generator below', human: 'Experts play the machine (against an LLM or proxy tester)' }}
        personLabel="Assigned experts"
        modelLabel="Generator"
        modelHint="A preset (its latest version) or a connection with its default model."
        modelNameHint="Optional; the preset's or connection's otherwise."
        temperatureLabel="Temperature override"
        temperatureDefault=""
        temperatureHint="0–2; optional."
      />
      <SeatPicker
        decl={seat('h')}
        models={models}
        people={experts}
        claimable={false}
        roundRobin
        sharedHelpers
        way={tester}
        onWayChange={(way) => {
          setTester(way)
          if (way === 'human' && machine === 'human') setMachine('llm')
        }}
        labels={{
          proxy: "Proxy over the dataset's ground truth (never revises; as in the paper's RAD runs)",
          human: 'Experts in the browser (sessions shared round robin)',
          llm: 'Another LLM',
        }}
        personLabel="Assigned experts"
        modelLabel="Tester LLM"
        modelHint="Uses the AGREE checker below."
        modelNameHint="Optional; the preset's or connection's otherwise."
        temperatureLabel="Temperature override"
        temperatureDefault=""
        temperatureHint="0–2; optional."
      />
      {machine === 'human' && tester === 'proxy' && (
        <div
          role="alert"
          className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900"
          data-testid="proxy-ground-truth-warning"
        >
          <p>
            <strong>The experts will see the ground truth.</strong> The proxy tester answers with the dataset’s
            reference answer: its first REFUTE shows the expert the reference prediction and explanation, which they can
            copy into their next message.
          </p>
          <fieldset>
            <legend className="font-medium">What the experts see of the proxy’s messages</legend>
            <label className="mt-1 flex items-center gap-2">
              <input type="radio" name="config.proxyAnswer" value="tag-only" defaultChecked /> Only its tag (RATIFY,
              REFUTE …): the reference answer stays hidden
            </label>
            <label className="flex items-center gap-2">
              <input type="radio" name="config.proxyAnswer" value="shown" /> Its whole answer, the reference included
            </label>
          </fieldset>
          <p className="text-xs">
            The choice is recorded in the run’s config (proxyAnswer); researchers always see everything.
          </p>
        </div>
      )}
      <SeatHelpers
        decls={PXP_SEAT_DECLS}
        models={models}
        legend="AGREE checker (both seats)"
        fields={{
          checker: {
            label: 'Checker (AGREE, temperature 0)',
            hint: 'Judges whether two explanations are consistent; used by the machine when an LLM plays it and by the proxy or LLM tester.',
            modelNameLabel: 'Checker model override',
          },
        }}
      />
      <fieldset className="grid gap-4 sm:grid-cols-3">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Protocol</legend>
        <Field name="config.n" label="Message bound n" type="number" defaultValue="10" />
        <Field name="config.k" label="REJECT allowed after k" type="number" defaultValue="3" />
        <Field name="repetitions" label="Repetitions R" type="number" defaultValue="1" />
        <label className="flex items-center gap-2 text-sm sm:col-span-3">
          <input type="checkbox" name="options.carryOver" defaultChecked /> Carry the machine's context over from the
          earlier sessions of a repetition (the paper's set-up; sessions of a repetition then run in order)
        </label>
        <label className="flex items-center gap-2 text-sm sm:col-span-3">
          <input type="checkbox" name="shuffle" /> Shuffle the instance order of each repetition (seeded by the
          repetition number, recorded)
        </label>
      </fieldset>
      <DraftField />
      <SubmitButton pendingText="Creating…">Create experiment</SubmitButton>
    </ActionForm>
  )
}
