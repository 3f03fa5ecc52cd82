'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { SeatPicker, type SeatWay } from '@/components/runs/seat-picker'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'
import { REHAC_SEATS } from '@/protocols/rehac/core/protocol'

const decl = (name: string) => REHAC_SEATS.find((d) => d.name === name) as (typeof REHAC_SEATS)[number]

/**
 * A ReHAC run: a task set of the study (QA with its corpus, or SQL with its schema), the step threshold,
 * the seats (the decider's program and its parameters, the agent's model, the human: a person or a
 * simulated one), and whether the run grows trajectory trees (collection, with the tree decider).
 */
export function RehacSetupForm({ studyId, protocol, datasets, models, experts }: SetupFormProps) {
  const [deciderWay, setDeciderWay] = useState<SeatWay>('program:agent-only')
  const sets = datasets
    .filter((d) => d.kind === 'rehac-qa' || d.kind === 'rehac-sql')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.instances} tasks (${d.kind === 'rehac-sql' ? 'SQL' : 'QA'})` }))
  if (!sets.length)
    return (
      <p className="text-sm text-stone-700">
        No ReHAC task set in this study yet: import questions with their corpus (ReHAC QA tasks) or SQL tasks with their
        schema (ReHAC SQL tasks) on the study page first.
      </p>
    )
  const program = deciderWay.startsWith('program:') ? deciderWay.slice('program:'.length) : null
  return (
    <ActionForm action={createRunAction} className="max-w-3xl space-y-5">
      <SetupHiddenFields studyId={studyId} protocol={protocol} />
      <Field name="name" label="Name" required maxLength={120} placeholder="e.g. random decider, seed 1" />
      <fieldset className="grid gap-3 sm:grid-cols-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Tasks</legend>
        <SelectField name="datasetId" label="Task set" options={sets} />
        <Field
          name="threshold"
          label="Step threshold (optional)"
          type="number"
          hint="Empty: QA 7, yes/no 5, SQL 8 (the authors' values)."
        />
        <Field name="repetitions" label="Episodes per task" type="number" defaultValue="1" />
        <Field name="sample" label="Only the first N tasks (optional)" type="number" />
      </fieldset>
      <SeatPicker
        decl={decl('decider')}
        models={models}
        people={experts}
        way={deciderWay}
        onWayChange={setDeciderWay}
        intro="Chooses before each step whether the agent or the human acts. An LLM here is the paper's prompt policy (answers [ChatGPT] or [Human])."
      />
      {program === 'random' || program === 'tree' ? (
        <Field name="decider.seed" label="Seed of the random decisions" type="number" defaultValue="0" />
      ) : null}
      {program === 'schedule' ? (
        <Field
          name="decider.solvers"
          label="Who acts at steps 1, 2, … (h human, a agent)"
          placeholder="hah"
          hint="After the last letter the agent acts."
        />
      ) : null}
      {program === 'http-policy' ? (
        <Field
          name="decider.url"
          label="Policy service URL"
          placeholder="https://policy.example.org/decide"
          hint='Parley POSTs {"state", "t", "question"} and expects {"pHuman": 0…1}.'
        />
      ) : null}
      {program === 'trained-policy' ? (
        <Field
          name="decider.model"
          label="Trained policy (JSON)"
          multiline
          hint="The model file of a trained policy."
        />
      ) : null}
      {program === 'http-policy' || program === 'trained-policy' ? (
        <Field
          name="decider.rule"
          label="Decision rule"
          defaultValue="argmax"
          hint="argmax (human iff p > 0.5), threshold:<p>, or sample:<seed>."
        />
      ) : null}
      <SeatPicker decl={decl('agent')} models={models} people={experts} defaultWay="llm" />
      <SeatPicker
        decl={decl('human')}
        models={models}
        people={experts}
        defaultWay="claimable"
        labels={{ llm: 'An LLM that simulates the human (marked “simulated”)' }}
      />
      <fieldset className="space-y-2 text-sm">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Collection</legend>
        <label className="flex items-center gap-2">
          <input type="checkbox" name="collection" value="on" /> Grow each task's trajectory tree (the decider must be
          the tree program)
        </label>
        <Field name="humanSamples" label="Human samples per human branch" type="number" defaultValue="1" />
      </fieldset>
      <DraftField />
      <SubmitButton pendingText="Creating…">Create run</SubmitButton>
    </ActionForm>
  )
}
