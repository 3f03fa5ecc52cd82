'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { Choice, SetupFormProps } from '@/components/protocols/types'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'

/** PXP runs on RAD, DRUG and generic datasets (a generic one with a task template). */
const KINDS = new Set(['rad', 'drug', 'generic'])

/**
 * A PXP experiment: the dataset (or its first N instances), who fills the machine and tester seats,
 * n, k, R, carry-over and the order. Posts to the generic create action (the plugin reads the fields).
 */
export function PxpSetupForm({ studyId, protocol, datasets: all, models, experts, extra }: SetupFormProps) {
  const templates = (extra.templates as Choice[] | undefined) ?? []
  const [tester, setTester] = useState<'proxy' | 'expert' | 'llm'>('proxy')
  const [machine, setMachine] = useState<'llm' | 'expert'>('llm')
  const needExperts = tester === 'expert' || machine === 'expert'
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
      <fieldset className="grid gap-4 sm:grid-cols-2">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Machine seat (m)</legend>
        <div className="flex flex-wrap gap-4 text-sm sm:col-span-2">
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="machine"
              value="llm"
              checked={machine === 'llm'}
              onChange={() => setMachine('llm')}
            />
            The LLM generator below
          </label>
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="machine"
              value="expert"
              checked={machine === 'expert'}
              onChange={() => {
                setMachine('expert')
                if (tester === 'expert') setTester('llm')
              }}
            />
            Experts play the machine (against an LLM or proxy tester)
          </label>
        </div>
        <SelectField
          name="generator"
          label="Generator"
          options={models}
          hint="A preset (its latest version) or a connection with its default model."
        />
        <Field name="machineModel" label="Model override" hint="Optional; the preset's or connection's otherwise." />
        <Field name="temperature" label="Temperature override" type="number" hint="0–2; optional." />
        <SelectField
          name="checker"
          label="Checker (AGREE, temperature 0)"
          options={models}
          hint="Judges whether two explanations are consistent."
        />
        <Field name="checkerModel" label="Checker model override" />
      </fieldset>
      <fieldset className="space-y-3">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Tester (the human seat)</legend>
        <div className="flex flex-wrap gap-4 text-sm">
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="tester"
              value="proxy"
              checked={tester === 'proxy'}
              onChange={() => setTester('proxy')}
            />
            Proxy over the dataset's ground truth (never revises; as in the paper's RAD runs)
          </label>
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="tester"
              value="expert"
              checked={tester === 'expert'}
              onChange={() => setTester('expert')}
            />
            Experts in the browser (sessions shared round robin)
          </label>
          <label className="flex items-center gap-2">
            <input
              type="radio"
              name="tester"
              value="llm"
              checked={tester === 'llm'}
              onChange={() => setTester('llm')}
            />
            Another LLM
          </label>
        </div>
        {machine === 'expert' && tester === 'proxy' && (
          <div
            role="alert"
            className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900"
            data-testid="proxy-ground-truth-warning"
          >
            <p>
              <strong>The experts will see the ground truth.</strong> The proxy tester answers with the dataset’s
              reference answer: its first REFUTE shows the expert the reference prediction and explanation, which they
              can copy into their next message.
            </p>
            <fieldset>
              <legend className="font-medium">What the experts see of the proxy’s messages</legend>
              <label className="mt-1 flex items-center gap-2">
                <input type="radio" name="proxyAnswer" value="tag-only" defaultChecked /> Only its tag (RATIFY, REFUTE
                …): the reference answer stays hidden
              </label>
              <label className="flex items-center gap-2">
                <input type="radio" name="proxyAnswer" value="shown" /> Its whole answer, the reference included
              </label>
            </fieldset>
            <p className="text-xs">
              The choice is recorded in the run’s config (proxyAnswer); researchers always see everything.
            </p>
          </div>
        )}
        {tester === 'llm' && (
          <SelectField
            name="testerModel"
            label="Tester LLM"
            options={models}
            hint="Uses the checker above for AGREE."
          />
        )}
        {needExperts &&
          (experts.length === 0 ? (
            <p className="text-sm text-amber-800">Add experts to the study first.</p>
          ) : (
            <div>
              <p className="text-sm font-medium text-stone-800">Assigned experts</p>
              <div className="mt-1 grid gap-1 sm:grid-cols-2">
                {experts.map((e) => (
                  <label key={e.value} className="flex items-center gap-2 text-sm">
                    <input type="checkbox" name="expertIds" value={e.value} /> {e.label}
                  </label>
                ))}
              </div>
            </div>
          ))}
      </fieldset>
      <fieldset className="grid gap-4 sm:grid-cols-3">
        <legend className="mb-1 text-sm font-semibold text-stone-900">Protocol</legend>
        <Field name="n" label="Message bound n" type="number" defaultValue="10" />
        <Field name="k" label="REJECT allowed after k" type="number" defaultValue="3" />
        <Field name="repetitions" label="Repetitions R" type="number" defaultValue="1" />
        <label className="flex items-center gap-2 text-sm sm:col-span-3">
          <input type="checkbox" name="carryOver" defaultChecked /> Carry the machine's context over from the earlier
          sessions of a repetition (the paper's set-up; sessions of a repetition then run in order)
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
