'use client'

import { useMemo, useState, useTransition } from 'react'
import { buildRelevancePrompt } from '@/protocols/labelling/core/prompt'
import { type Paraphrase, paraphraseName, paraphraseSchema } from '@/protocols/labelling/core/variants'
import { type PromptLabRunAnswer, startPromptLabRuns } from '@/protocols/labelling/ui/prompt-lab-actions'

const box = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm'

export interface PromptLabFormProps {
  studyId: string
  datasetId: string
  variants: readonly string[]
  connections: Array<{ id: string; name: string; model: string }>
  sample: { query: string; description?: string; narrative?: string; document: string } | null
  /** The page's table arguments, stored with the lab run (its tables are computed with them). */
  args?: Record<string, string>
  /** The page's address without `lab`: the new lab run opens there. */
  href: string
}

/**
 * Pick variants (the 32 codes in Table 2's order) and paraphrases (children of a variant: the two
 * spans), see the rendered prompt of the dataset's first item, choose a connection and model, Run: one
 * lab run on the job queue (an LLM-labeller run per prompt); the page then follows its progress.
 */
export function PromptLabForm({ studyId, datasetId, variants, connections, sample, args, href }: PromptLabFormProps) {
  const [picked, setPicked] = useState<Set<string>>(new Set(['-----', '-DNA-']))
  const [paraphrases, setParaphrases] = useState<Paraphrase[]>([])
  const [preview, setPreview] = useState<string>('-DNA-')
  const [draft, setDraft] = useState<{ parent: string; id: string; instructions: string; steps: string } | null>(null)
  const [draftError, setDraftError] = useState<string | null>(null)
  const [connectionId, setConnectionId] = useState(connections[0]?.id ?? '')
  const [model, setModel] = useState('')
  const [answer, setAnswer] = useState<PromptLabRunAnswer | null>(null)
  const [pending, start] = useTransition()

  const previewText = useMemo(() => {
    if (!sample) return 'This dataset has no query–document item to preview.'
    const [code, pid] = preview.split('/')
    const para = pid ? paraphrases.find((p) => p.parent === code && p.id === pid) : undefined
    try {
      return buildRelevancePrompt(code!, sample, para).text
    } catch (err) {
      return (err as Error).message
    }
  }, [preview, sample, paraphrases])

  const toggle = (name: string) =>
    setPicked((s) => {
      const n = new Set(s)
      if (n.has(name)) n.delete(name)
      else n.add(name)
      return n
    })

  function saveDraft() {
    if (!draft) return
    const r = paraphraseSchema.safeParse({
      parent: draft.parent,
      id: draft.id,
      spans: {
        ...(draft.instructions.trim() ? { instructions: draft.instructions } : {}),
        ...(draft.steps.trim() ? { steps: draft.steps } : {}),
      },
    })
    if (!r.success) {
      setDraftError(r.error.issues[0]?.message ?? 'Not a paraphrase.')
      return
    }
    setParaphrases((ps) => [...ps.filter((p) => !(p.parent === r.data.parent && p.id === r.data.id)), r.data])
    setPicked((s) => new Set(s).add(paraphraseName(r.data)))
    setPreview(paraphraseName(r.data))
    setDraft(null)
    setDraftError(null)
  }

  function run() {
    const prompts = [...picked].map((name) => {
      const [variant, pid] = name.split('/')
      const paraphrase = pid ? paraphrases.find((p) => p.parent === variant && p.id === pid) : undefined
      return { variant: variant!, ...(paraphrase ? { paraphrase } : {}) }
    })
    start(async () => {
      try {
        const a = await startPromptLabRuns({
          studyId,
          datasetId,
          connectionId,
          model: model || undefined,
          prompts,
          ...(args ? { args } : {}),
        })
        setAnswer(a)
        if (a.labRunId)
          window.location.assign(`${href}${href.includes('?') ? '&' : '?'}lab=${encodeURIComponent(a.labRunId)}`)
      } catch {
        setAnswer({ labRunId: null, error: 'The server could not be reached. Try again.' })
      }
    })
  }

  return (
    <div className="space-y-4">
      <fieldset>
        <legend className="text-sm font-medium text-stone-800">Prompt variants (Table 2 order)</legend>
        <div className="mt-2 grid grid-cols-2 gap-x-4 gap-y-1 sm:grid-cols-4">
          {variants.map((v) => (
            <div key={v} className="text-sm">
              <label className="inline-flex items-center gap-1 font-mono">
                <input type="checkbox" checked={picked.has(v)} onChange={() => toggle(v)} />
                {v}
              </label>{' '}
              <button type="button" className="text-xs text-brand-700 underline" onClick={() => setPreview(v)}>
                preview
              </button>{' '}
              <button
                type="button"
                className="text-xs text-brand-700 underline"
                onClick={() =>
                  setDraft({
                    parent: v,
                    id: `p${paraphrases.filter((p) => p.parent === v).length + 1}`,
                    instructions: '',
                    steps: '',
                  })
                }
              >
                + paraphrase
              </button>
              {paraphrases
                .filter((p) => p.parent === v)
                .map((p) => (
                  <div key={p.id} className="ml-4">
                    <label className="inline-flex items-center gap-1 font-mono">
                      <input
                        type="checkbox"
                        checked={picked.has(paraphraseName(p))}
                        onChange={() => toggle(paraphraseName(p))}
                      />
                      {paraphraseName(p)}
                    </label>{' '}
                    <button
                      type="button"
                      className="text-xs text-brand-700 underline"
                      onClick={() => setPreview(paraphraseName(p))}
                    >
                      preview
                    </button>{' '}
                    <button
                      type="button"
                      className="text-xs text-brand-700 underline"
                      onClick={() =>
                        setDraft({
                          parent: p.parent,
                          id: p.id,
                          instructions: p.spans.instructions ?? '',
                          steps: p.spans.steps ?? '',
                        })
                      }
                    >
                      edit
                    </button>
                  </div>
                ))}
            </div>
          ))}
        </div>
      </fieldset>
      {draft ? (
        <div className="rounded border border-stone-200 p-3">
          <p className="text-sm font-medium">
            Paraphrase{' '}
            <span className="font-mono">
              {draft.parent}/{draft.id}
            </span>
            : rewrite one span or both (a blank span keeps the original).
          </p>
          <label className="mt-2 block text-sm">
            Id
            <input className={box} value={draft.id} onChange={(e) => setDraft({ ...draft, id: e.target.value })} />
          </label>
          <label className="mt-2 block text-sm">
            Instructions span
            <textarea
              className={box}
              rows={4}
              value={draft.instructions}
              onChange={(e) => setDraft({ ...draft, instructions: e.target.value })}
            />
          </label>
          <label className="mt-2 block text-sm">
            Steps span
            <textarea
              className={box}
              rows={3}
              value={draft.steps}
              onChange={(e) => setDraft({ ...draft, steps: e.target.value })}
            />
          </label>
          {draftError ? (
            <p role="alert" className="mt-1 text-sm text-red-700">
              {draftError}
            </p>
          ) : null}
          <div className="mt-2 flex gap-2">
            <button type="button" className="rounded bg-brand-700 px-3 py-1 text-sm text-white" onClick={saveDraft}>
              Keep paraphrase
            </button>
            <button type="button" className="rounded border px-3 py-1 text-sm" onClick={() => setDraft(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <details open>
        <summary className="cursor-pointer text-sm font-medium">
          Prompt of the first item under <span className="font-mono">{preview}</span>
        </summary>
        <pre className="mt-2 max-h-80 overflow-auto whitespace-pre-wrap rounded bg-stone-50 p-3 text-xs">
          {previewText}
        </pre>
      </details>
      <div className="grid gap-3 sm:grid-cols-2">
        <label className="block text-sm">
          LLM connection
          <select className={box} value={connectionId} onChange={(e) => setConnectionId(e.target.value)}>
            {connections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name} ({c.model})
              </option>
            ))}
          </select>
        </label>
        <label className="block text-sm">
          Model (blank: the connection's default)
          <input className={box} value={model} onChange={(e) => setModel(e.target.value)} />
        </label>
      </div>
      <button
        type="button"
        disabled={pending || !picked.size || !connectionId}
        onClick={run}
        className="rounded-md bg-brand-700 px-4 py-2 text-sm font-medium text-white disabled:opacity-50"
      >
        {pending ? 'Queueing…' : `Run ${picked.size} prompt${picked.size === 1 ? '' : 's'}`}
      </button>
      {answer?.error ? (
        <p role="alert" className="text-sm text-red-700">
          {answer.error}
        </p>
      ) : answer?.labRunId ? (
        <p role="status" className="text-sm">
          Queued as lab run <span className="font-mono">{answer.labRunId}</span>.
        </p>
      ) : null}
    </div>
  )
}
