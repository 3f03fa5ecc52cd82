'use client'

import { useEffect, useRef, useState } from 'react'
import { submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import type { TurnFormProps } from '@/components/protocols/types'
import { TurnHiddenFields } from '@/components/sessions/turn-fields'
import { useTurnDraft } from '@/components/sessions/use-turn-draft'
import { Card } from '@/components/ui/card'
import { Markdown } from '@/components/ui/markdown'
import type { Question } from '@/protocols/labelling/core/schema'
import type { LabellingSessionView as View } from '@/protocols/labelling/server/views'
import {
  isField,
  LABEL_KEYS,
  type LabelDraft,
  labelShortcut,
  moveFocus,
  readLabelDraft,
} from '@/protocols/labelling/ui/shortcuts'

const EMPTY: LabelDraft = { answers: {}, rationale: '', turns: {} }

/**
 * The label form, keyboard first (shortcuts.ts): each question a group of option buttons (1–9 pick the
 * focused question's option, j/k or ↓/↑ move, Enter sends), the rationale when the schema asks one, the
 * per-turn answers of a transcript, the guidelines (g) and the key list (?). A draft is kept (server and
 * this browser) so a reload loses nothing; the time from the item being shown is sent as elapsedMs.
 */
export function LabellingTurnForm({ session: s }: TurnFormProps) {
  const ask = s.ask
  if (!ask) return null
  return <LabelForm key={`${s.id}:${ask.j}`} session={s} j={ask.j} serverDraft={s.draft?.data ?? null} />
}

function LabelForm({
  session: s,
  j,
  serverDraft,
}: {
  session: TurnFormProps['session']
  j: number
  serverDraft: unknown
}) {
  const v = s.view as View
  const { schema, item } = v
  const questions = schema.questions as Question[]
  const [draft, setDraft] = useState<LabelDraft>(EMPTY)
  const [touched, setTouched] = useState(false)
  const [focus, setFocus] = useState(0)
  const [help, setHelp] = useState(false)
  const [guidelines, setGuidelines] = useState(false)
  const shownAt = useRef(Date.now())
  const elapsed = useRef<HTMLInputElement>(null)
  const formBox = useRef<HTMLDivElement>(null)
  const status = useTurnDraft({
    sessionId: s.id,
    seq: j,
    serverDraft,
    draft,
    touched,
    restore: setDraft,
    read: readLabelDraft,
  })

  const set = (update: (d: LabelDraft) => LabelDraft) => {
    setDraft(update)
    setTouched(true)
  }
  const pick = (q: Question, index: number) => {
    const o = q.options[index]
    if (o) set((d) => ({ ...d, answers: { ...d.answers, [q.id]: String(o.value) } }))
  }
  const send = () => formBox.current?.querySelector('form')?.requestSubmit()

  const latest = useRef({ focus, questions, pick, send })
  useEffect(() => {
    latest.current = { focus, questions, pick, send }
  })
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null
      // Arrows inside a scrolling document scroll it.
      if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && target?.closest('[data-scrolls]')) return
      const { focus: f, questions: qs } = latest.current
      const c = labelShortcut(e, isField(target), qs[f]?.options.length ?? 0)
      if (!c) return
      e.preventDefault()
      if (c.kind === 'pick') {
        const q = qs[f]
        if (q) latest.current.pick(q, c.option)
      } else if (c.kind === 'move') setFocus((x) => moveFocus(x, c.by, qs.length))
      else if (c.kind === 'send') latest.current.send()
      else if (c.kind === 'help') setHelp((h) => !h)
      else setGuidelines((g) => !g)
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [])

  const perTurn = schema.perTurn && item.kind === 'transcript' ? item.turns : []
  return (
    <Card title="Your label">
      <div
        ref={formBox}
        onSubmitCapture={() => {
          if (elapsed.current) elapsed.current.value = String(Date.now() - shownAt.current)
        }}
      >
        <ActionForm action={submitTurnAction} className="space-y-4">
          <TurnHiddenFields session={s} seq={j} />
          <input ref={elapsed} type="hidden" name="elapsedMs" defaultValue="" />
          {questions.map((q, qi) => (
            <div
              key={q.id}
              role="radiogroup"
              aria-label={q.text}
              data-question={q.id}
              data-focused={qi === focus ? 'true' : 'false'}
              className={`rounded-md border p-3 ${qi === focus ? 'border-brand-500 ring-1 ring-brand-300' : 'border-stone-200'}`}
              onFocus={() => setFocus(qi)}
            >
              <p className="px-1 text-sm font-medium text-stone-900">
                {q.id}. {q.text}
                {q.required ? null : <span className="ml-1 text-xs text-stone-500">(optional)</span>}
              </p>
              <input type="hidden" name={`answer.${q.id}`} value={draft.answers[q.id] ?? ''} />
              <div className="mt-1 flex flex-wrap gap-2">
                {q.options.map((o, oi) => {
                  const chosen = draft.answers[q.id] === String(o.value)
                  return (
                    <button
                      key={String(o.value)}
                      type="button"
                      role="radio"
                      aria-checked={chosen}
                      onClick={() => {
                        setFocus(qi)
                        pick(q, oi)
                      }}
                      className={`rounded-md border px-3 py-1.5 text-left text-sm ${chosen ? 'border-brand-600 bg-brand-50 font-medium' : 'border-stone-300 bg-white hover:bg-stone-100'}`}
                    >
                      {oi < 9 ? <kbd className="mr-1 font-mono text-xs text-stone-500">{oi + 1}</kbd> : null}
                      {o.label}
                    </button>
                  )
                })}
              </div>
            </div>
          ))}
          {schema.rationale !== 'off' ? (
            <label className="block text-sm font-medium text-stone-800">
              Rationale{schema.rationale === 'required' ? '' : ' (optional)'}
              <textarea
                name="rationale"
                value={draft.rationale}
                maxLength={4000}
                rows={3}
                onChange={(e) => set((d) => ({ ...d, rationale: e.target.value }))}
                className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
              />
            </label>
          ) : null}
          {perTurn.length ? (
            <details className="text-sm">
              <summary className="cursor-pointer font-medium">Per-turn labels (optional)</summary>
              <ol className="mt-2 space-y-2">
                {perTurn.map((t) => (
                  <li key={t.index} className="flex flex-wrap items-center gap-2">
                    <span className="w-32 text-xs text-stone-600">
                      Turn {t.index} · {t.who}
                    </span>
                    {questions.map((q) => (
                      <select
                        key={q.id}
                        name={`turn.${t.index}.${q.id}`}
                        aria-label={`Turn ${t.index}: ${q.id}`}
                        value={draft.turns[String(t.index)]?.[q.id] ?? ''}
                        onChange={(e) =>
                          set((d) => ({
                            ...d,
                            turns: {
                              ...d.turns,
                              [String(t.index)]: { ...d.turns[String(t.index)], [q.id]: e.target.value },
                            },
                          }))
                        }
                        className="rounded-md border border-stone-300 px-2 py-1 text-xs"
                      >
                        <option value="">{q.id}: —</option>
                        {q.options.map((o) => (
                          <option key={String(o.value)} value={String(o.value)}>
                            {q.id}: {o.label}
                          </option>
                        ))}
                      </select>
                    ))}
                  </li>
                ))}
              </ol>
            </details>
          ) : null}
          <div className="flex flex-wrap items-center gap-3">
            <SubmitButton pendingText="Sending…">Send label (Enter)</SubmitButton>
            <button
              type="button"
              onClick={() => setGuidelines((g) => !g)}
              className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
            >
              {guidelines ? 'Hide' : 'Show'} guidelines (g)
            </button>
            <button
              type="button"
              onClick={() => setHelp((h) => !h)}
              className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
            >
              Keys (?)
            </button>
            {status ? (
              <span role="status" className="text-xs text-stone-500">
                {status}
              </span>
            ) : null}
          </div>
        </ActionForm>
      </div>
      {help ? (
        <ul aria-label="Keyboard shortcuts" className="mt-3 space-y-1 text-xs text-stone-700" data-testid="label-keys">
          {LABEL_KEYS.map(([keys, what]) => (
            <li key={keys}>
              <kbd className="rounded border border-stone-300 bg-stone-50 px-1 font-mono">{keys}</kbd> {what}
            </li>
          ))}
          <li>Keys do nothing while you type in the rationale.</li>
        </ul>
      ) : null}
      {guidelines ? (
        <section aria-label="Guidelines" className="mt-3 rounded-md bg-stone-50 p-3" data-testid="label-guidelines">
          {schema.guidelines ? <Markdown>{schema.guidelines}</Markdown> : <p className="text-sm">No guidelines.</p>}
        </section>
      ) : null}
    </Card>
  )
}
