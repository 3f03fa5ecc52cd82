'use client'

import { useState } from 'react'
import { createRunAction } from '@/app/actions/runs'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'
import type { SetupFormProps } from '@/components/protocols/types'
import { SeatPicker, type SeatWay } from '@/components/runs/seat-picker'
import { DraftField, SetupHiddenFields } from '@/components/runs/setup-fields'
import { MINT_SEATS } from '@/protocols/mint/core/protocol'
import { ToolUnavailable } from '@/protocols/mint/ui/tool-unavailable'

/** The paper's curve: k = 1…5, each its own run. */
const CURVE_KS = [1, 2, 3, 4, 5] as const

const decl = (name: string) => MINT_SEATS.find((d) => d.name === name) as (typeof MINT_SEATS)[number]

/**
 * A MINT run: a task set of the study (an imported test_prompts.json), the budget k and the proposals p,
 * the evaluated model (an LLM with the paper's settings, or a person), and the feedback: none (the
 * program no-feedback), an LLM simulating the expert, or a person, with its settings (textual or binary,
 * with or without the ground truth, dense or sparse). Ticking several budgets k creates one run per k
 * together (an SR-vs-k curve). When the Python tool cannot run here, the form
 * says so and why first.
 */
export function MintSetupForm({ studyId, protocol, datasets, models, experts, extra }: SetupFormProps) {
  const [feedbackWay, setFeedbackWay] = useState<SeatWay>('program:no-feedback')
  const sandbox = (extra.sandbox ?? { available: true }) as {
    available: boolean
    reason?: string
    installHint?: string
  }
  const taskSets = (extra.taskSets ?? {}) as Record<string, { taskType: string; corpusPages: number }>
  const corpusLabel = (id: string) => {
    const t = taskSets[id]
    if (t?.taskType !== 'reasoning') return ''
    return t.corpusPages > 0 ? ` · wikipedia_search over ${t.corpusPages} corpus pages` : ' · no corpus: no search'
  }
  const sets = datasets
    .filter((d) => d.kind === 'mint-tasks')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d.instances} tasks${corpusLabel(d.id)}` }))
  return (
    <div className="max-w-3xl space-y-4">
      {!sandbox.available ? <ToolUnavailable sandbox={sandbox} /> : null}
      {!sets.length ? (
        <p className="text-sm text-stone-700">
          No MINT task set in this study yet: import a test_prompts.json (MINT tasks) on the study page first.
        </p>
      ) : (
        <ActionForm action={createRunAction} className="space-y-5">
          <SetupHiddenFields studyId={studyId} protocol={protocol} />
          <Field name="name" label="Name" required maxLength={120} placeholder="e.g. gpt-4, k = 5, no feedback" />
          <fieldset className="grid gap-3 sm:grid-cols-2">
            <legend className="mb-1 text-sm font-semibold text-stone-900">Tasks and budget</legend>
            <div className="sm:col-span-2">
              <SelectField name="datasetId" label="Task set" options={sets} />
              <p className="mt-1 text-xs text-stone-500" data-search-note>
                Reasoning tasks get wikipedia_search(query) over the offline corpus imported with their task set (a
                corpus upload beside test_prompts.json). Reasoning runs without a corpus have no search: the function
                only answers that the run has no corpus.
              </p>
            </div>
            <Field name="sample" label="Only the first N tasks (optional)" type="number" />
            <Field name="k" label="Turns k" type="number" defaultValue="5" hint="The interaction budget (1–10)." />
            <Field name="p" label="Proposals p (optional)" type="number" hint="Empty: 2, or 1 when k = 1." />
          </fieldset>
          <fieldset className="space-y-1">
            <legend className="mb-1 text-sm font-semibold text-stone-900">SR-vs-k curve (optional)</legend>
            <div className="flex flex-wrap gap-4 text-sm">
              {CURVE_KS.map((k) => (
                <label key={k} className="flex items-center gap-1">
                  <input type="checkbox" name="ks" value={String(k)} /> k = {k}
                </label>
              ))}
            </div>
            <p className="text-xs text-stone-600">
              Tick several budgets to create one run per k, all together (named “name · k = …”; p is capped at k, so 1
              when k = 1). The leaderboard draws the runs of one model and feedback setting as one SR-vs-k curve. None
              ticked: one run with the k above.
            </p>
          </fieldset>
          <SeatPicker
            decl={decl('agent')}
            models={models}
            people={experts}
            defaultWay="llm"
            temperature={false}
            intro="Called with the paper's settings: temperature 0, at most 512 tokens, its stop strings. A person may answer as the model."
          />
          <SeatPicker
            decl={decl('feedback')}
            models={models}
            people={experts}
            way={feedbackWay}
            onWayChange={setFeedbackWay}
            temperature={false}
            labels={{ 'program:no-feedback': 'No feedback', llm: 'An LLM simulating the expert' }}
            intro="Feedback after a turn: an LLM (temperature 0, at most 1,024 tokens, the paper's template) or a person on the expert's feedback page."
          />
          {feedbackWay !== 'program:no-feedback' ? (
            <fieldset className="grid gap-3 sm:grid-cols-3">
              <legend className="mb-1 text-sm font-semibold text-stone-900">Feedback settings</legend>
              <SelectField
                name="feedback.mode"
                label="Form"
                options={[
                  { value: 'textual', label: 'Textual' },
                  { value: 'binary', label: 'Binary (GOOD / BAD)' },
                ]}
              />
              <SelectField
                name="feedback.frequency"
                label="When"
                options={[
                  { value: 'dense', label: 'Dense: after every turn' },
                  { value: 'sparse', label: 'Sparse: after a proposal' },
                ]}
              />
              <label className="flex items-center gap-2 self-end text-sm">
                <input type="checkbox" name="feedback.groundTruth" value="on" /> Give the feedback provider the ground
                truth (never disclosed)
              </label>
            </fieldset>
          ) : null}
          <DraftField />
          <SubmitButton pendingText="Creating…">Create run</SubmitButton>
        </ActionForm>
      )}
    </div>
  )
}
