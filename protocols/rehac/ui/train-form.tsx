'use client'

import { useId, useState, useTransition } from 'react'
import { type TrainAnswer, trainPolicyAction } from '@/protocols/rehac/ui/actions'

/** A ReHAC run the policy can learn from: its ended episodes. */
export interface TrainableRun {
  id: string
  name: string
  ended: number
}

const box = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm'
const label = 'block text-sm font-medium text-stone-800'
const LAMBDAS = ['0.06', '0.08', '0.10']
const UNREACHABLE = 'The server could not be reached. Try again.'

const pct = (x: number) => `${(100 * x).toFixed(1)} %`
const num = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : '—')

/** A labelled number box of the form (required; the server checks the range again). */
function NumberField({
  id,
  label: text,
  ...input
}: {
  id: string
  name: string
  label: string
  defaultValue: string
  min?: number
  max?: number
  step?: string
  list?: string
}) {
  return (
    <div>
      <label className={label} htmlFor={id}>
        {text}
      </label>
      <input id={id} className={box} type="number" required {...input} />
    </div>
  )
}

/**
 * Train a collaboration policy on the study's trajectory trees (`rehac.train`): λ, epochs, seed and the
 * held-out fraction (whole questions), over the chosen runs or all of them. The answer is the model, to
 * copy or download and paste as a trained-policy decider's model in a new run, and the offline
 * estimate on the held-out trees beside agent-only and human-only. Nothing is stored.
 */
export function RehacTrainForm({ studyId, runs }: { studyId: string; runs: TrainableRun[] }) {
  const ids = useId()
  const [pending, start] = useTransition()
  const [error, setError] = useState<string | null>(null)
  const [result, setResult] = useState<TrainAnswer | null>(null)
  const [copied, setCopied] = useState(false)
  const trainable = runs.filter((r) => r.ended > 0)

  function submit(form: HTMLFormElement) {
    const f = new FormData(form)
    const chosen = f.getAll('runIds').map(String)
    const input = {
      studyId,
      ...(chosen.length ? { runIds: chosen } : {}),
      lambda: Number(f.get('lambda')),
      epochs: Number(f.get('epochs')),
      seed: Number(f.get('seed')),
      heldOutFraction: Number(f.get('heldOutFraction')),
    }
    setError(null)
    setCopied(false)
    start(async () => {
      try {
        const a = await trainPolicyAction(input)
        if (a.ok) setResult(a.data)
        else {
          setResult(null)
          setError(a.error)
        }
      } catch {
        setError(UNREACHABLE)
      }
    })
  }

  const modelText = result ? JSON.stringify(result.model, null, 2) : ''
  return (
    <div className="space-y-6">
      <form
        className="space-y-4 rounded-lg border border-stone-200 bg-white p-4"
        aria-busy={pending}
        onSubmit={(e) => {
          e.preventDefault()
          submit(e.currentTarget)
        }}
      >
        <fieldset className="space-y-1">
          <legend className={label}>Runs to learn from</legend>
          {trainable.length === 0 ? (
            <p className="text-sm text-stone-600">
              No ReHAC run of this study has an ended episode yet. A collection run (the tree decider) gives both
              actions at each state, which is what the advantages need.
            </p>
          ) : (
            <>
              <p className="text-xs text-stone-600">None ticked: every ReHAC run of the study.</p>
              {trainable.map((r) => (
                <label key={r.id} className="flex items-center gap-2 text-sm">
                  <input type="checkbox" name="runIds" value={r.id} />
                  {r.name} <span className="text-stone-500">({r.ended} ended episodes)</span>
                </label>
              ))}
            </>
          )}
        </fieldset>
        <div className="grid grid-cols-2 gap-4 sm:grid-cols-4">
          <NumberField
            id={`${ids}-lambda`}
            name="lambda"
            label="λ (cost of a human step)"
            step="any"
            min={0}
            max={1}
            defaultValue="0.08"
            list={`${ids}-lambdas`}
          />
          <datalist id={`${ids}-lambdas`}>
            {LAMBDAS.map((l) => (
              <option key={l} value={l} />
            ))}
          </datalist>
          <NumberField id={`${ids}-epochs`} name="epochs" label="Epochs" min={1} max={200} defaultValue="10" />
          <NumberField id={`${ids}-seed`} name="seed" label="Seed" min={0} defaultValue="42" />
          <NumberField
            id={`${ids}-held`}
            name="heldOutFraction"
            label="Held-out questions (fraction)"
            step="any"
            min={0}
            max={0.9}
            defaultValue="0.2"
          />
        </div>
        <div className="flex items-center gap-3">
          <button
            type="submit"
            disabled={pending || trainable.length === 0}
            className="rounded-md bg-stone-900 px-4 py-1.5 text-sm font-medium text-white hover:bg-stone-700 disabled:opacity-60"
          >
            {pending ? 'Training…' : 'Train'}
          </button>
          {pending ? (
            <span role="status" className="text-sm text-stone-600">
              Computing the advantages and training; a large study takes a few seconds.
            </span>
          ) : null}
        </div>
        {error ? (
          <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
            {error}
          </p>
        ) : null}
      </form>
      {result ? (
        <section aria-label="Training result" className="space-y-4 rounded-lg border border-stone-200 bg-white p-4">
          <h2 className="text-base font-semibold text-stone-900">Trained policy</h2>
          <p className="text-sm text-stone-700">
            {result.summary.trajectories} trajectories, {result.summary.rows} advantage rows ({result.summary.trainRows}{' '}
            to train on, {result.summary.heldOutRows} held out over {result.summary.heldOutQuestions} questions); final
            loss {num(result.summary.finalLoss)}.
          </p>
          <table className="w-full text-left text-sm">
            <caption className="mb-1 text-left text-xs text-stone-600">
              Offline estimate: the mean advantage of the action chosen, how often it is the better action, and how
              often it asks the human, per state.
            </caption>
            <thead>
              <tr className="border-b border-stone-200 text-stone-600">
                <th className="py-1 pr-4 font-medium">Rows</th>
                <th className="py-1 pr-4 font-medium">Decider</th>
                <th className="py-1 pr-4 font-medium">Mean chosen A</th>
                <th className="py-1 pr-4 font-medium">Better action</th>
                <th className="py-1 pr-4 font-medium">Asks the human</th>
                <th className="py-1 font-medium">States</th>
              </tr>
            </thead>
            <tbody>
              {[
                ['training', 'trained policy', result.summary.train] as const,
                ...(result.summary.heldOut
                  ? ([
                      ['held out', 'trained policy', result.summary.heldOut.policy],
                      ['held out', 'agent only', result.summary.heldOut.agentOnly],
                      ['held out', 'human only', result.summary.heldOut.humanOnly],
                    ] as const)
                  : []),
              ].map(([rows, who, e]) => (
                <tr key={`${rows}-${who}`} className="border-b border-stone-100">
                  <td className="py-1 pr-4">{rows}</td>
                  <td className="py-1 pr-4">{who}</td>
                  <td className="py-1 pr-4 tabular-nums">{num(e.meanChosenAdvantage)}</td>
                  <td className="py-1 pr-4 tabular-nums">{pct(e.stateAccuracy)}</td>
                  <td className="py-1 pr-4 tabular-nums">{pct(e.humanRate)}</td>
                  <td className="py-1 tabular-nums">{e.states}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {result.summary.heldOut ? null : (
            <p className="text-sm text-stone-600">
              Nothing was held out (a fraction of 0, or fewer than two questions).
            </p>
          )}
          <div>
            <label className={label} htmlFor={`${ids}-model`}>
              The model (paste it as the trained policy of a new run&apos;s decider)
            </label>
            <textarea id={`${ids}-model`} readOnly rows={8} className={`${box} font-mono text-xs`} value={modelText} />
            <div className="mt-2 flex gap-3">
              <button
                type="button"
                className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
                onClick={() =>
                  navigator.clipboard?.writeText(modelText).then(
                    () => setCopied(true),
                    () => setCopied(false),
                  )
                }
              >
                {copied ? 'Copied' : 'Copy the model'}
              </button>
              <a
                className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
                download={`rehac-policy-lambda${result.summary.lambda}-seed${result.summary.seed}.json`}
                href={`data:application/json;charset=utf-8,${encodeURIComponent(modelText)}`}
              >
                Download the model
              </a>
            </div>
          </div>
        </section>
      ) : null}
    </div>
  )
}
