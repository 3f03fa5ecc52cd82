'use client'

import { type ReactNode, useEffect, useId, useRef, useState } from 'react'
import { submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import type { TurnFormProps } from '@/components/protocols/types'
import { TurnHiddenFields } from '@/components/sessions/turn-fields'
import { useTurnDraft } from '@/components/sessions/use-turn-draft'
import { Card } from '@/components/ui/card'
import type { ActionType } from '@/protocols/rehac/core/protocol'
import { renderAction, type TrajectoryActionType } from '@/protocols/rehac/core/trajectory'
import type { RehacPreview, RehacSuggestion } from '@/protocols/rehac/server/operations'
import type { RehacSessionView as View } from '@/protocols/rehac/server/views'
import { type Answer, previewStepAction, suggestStepAction } from '@/protocols/rehac/ui/actions'
import {
  type Command,
  isField,
  readDraft,
  type StepDraft,
  shortcutFor,
  shortcutHelp,
} from '@/protocols/rehac/ui/shortcuts'

const ACTION_LABELS: Record<ActionType, string> = {
  search: 'Search[entity]',
  lookup: 'Lookup[keyword]',
  finish: 'Finish[answer]',
  sql: 'Run an SQL statement',
  submit: 'submit (the last statement is the answer)',
}

const box = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm'
const label = 'block text-sm font-medium text-stone-800'
const button =
  'rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm text-stone-800 hover:bg-stone-100 disabled:opacity-60'
const UNREACHABLE = 'The server could not be reached. Try again.'

type Session = TurnFormProps['session']
type FormKind = { kind: 'step'; task: 'qa' | 'sql' } | { kind: 'decide' }
/** A request of the form's own (Run, Show a suggestion): not asked yet, on its way, failed, answered. */
type Asked<T> =
  | { status: 'idle' }
  | { status: 'pending' }
  | { status: 'error'; error: string }
  | { status: 'done'; data: T; for: string }

/**
 * A person's turn: deciding who acts (a person in the decider seat), or writing step t (Thought and
 * Action for QA, a statement or submit for SQL). The step form can run the action first ("Run": the
 * Observation it would get, nothing written), show the agent's own suggestion and copy it in ("Use it";
 * the step records 'opened' or 'copied'), keeps a draft (server and browser) so a reload loses nothing,
 * and sends the time from its showing as `ms`. Keyboard: see shortcuts.ts and the help line.
 */
export function RehacTurnForm({ session: s }: TurnFormProps) {
  const v = s.view as View
  const ask = s.ask
  if (!ask || !v.due) return null
  if (v.due.kind === 'decide') return <DecideForm key={`${s.id}:${ask.j}`} session={s} j={ask.j} t={v.due.t} />
  return <StepForm key={`${s.id}:${ask.j}`} session={s} j={ask.j} view={v} serverDraft={s.draft?.data ?? null} />
}

/** The document's key presses as the form's commands (modifiers anywhere, single keys outside fields). */
function useShortcuts(form: FormKind, run: (c: Command) => void) {
  const latest = useRef(run)
  useEffect(() => {
    latest.current = run
  })
  const kind = form.kind
  const task = form.kind === 'step' ? form.task : null
  useEffect(() => {
    const f: FormKind = kind === 'decide' ? { kind } : { kind: 'step', task: task ?? 'qa' }
    const onKey = (e: KeyboardEvent) => {
      const c = shortcutFor(e, isField(e.target as HTMLElement | null), f)
      if (!c) return
      e.preventDefault()
      latest.current(c)
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [kind, task])
}

function HelpLine({ form }: { form: FormKind }) {
  return (
    <p className="text-xs text-stone-500">
      Keys:{' '}
      {shortcutHelp(form).map(([keys, what], i) => (
        <span key={keys}>
          {i ? ' · ' : ''}
          <kbd className="rounded border border-stone-300 bg-stone-50 px-1 font-mono">{keys}</kbd> {what}
        </span>
      ))}{' '}
      (⌘ for Ctrl on a Mac; single keys do nothing while you type in a field)
    </p>
  )
}

function DecideForm({ session: s, j, t }: { session: Session; j: number; t: number }) {
  const [solver, setSolver] = useState<'agent' | 'human'>('agent')
  const formBox = useRef<HTMLDivElement>(null)
  const id = useId()
  useShortcuts({ kind: 'decide' }, (c) => {
    if (c.kind === 'solver') setSolver(c.solver)
    else if (c.kind === 'send') formBox.current?.querySelector('form')?.requestSubmit()
  })
  const radio = (value: 'agent' | 'human', text: string) => (
    <span className="flex items-center gap-1">
      <input
        type="radio"
        id={`${id}-${value}`}
        name="solver"
        value={value}
        checked={solver === value}
        onChange={() => setSolver(value)}
      />
      <label htmlFor={`${id}-${value}`}>{text}</label>
    </span>
  )
  return (
    <Card title={`Who carries out step ${t}?`}>
      <div ref={formBox}>
        <ActionForm action={submitTurnAction} className="space-y-3">
          <TurnHiddenFields session={s} seq={j} />
          <fieldset className="flex gap-4 text-sm">
            <legend className="sr-only">Solver</legend>
            {radio('agent', 'The agent')}
            {radio('human', 'The human')}
          </fieldset>
          <SubmitButton pendingText="Sending…">Decide</SubmitButton>
          <HelpLine form={{ kind: 'decide' }} />
        </ActionForm>
      </div>
    </Card>
  )
}

async function askServer<T>(call: () => Promise<Answer<T>>, forKey: string, set: (a: Asked<T>) => void) {
  set({ status: 'pending' })
  try {
    const r = await call()
    set(r.ok ? { status: 'done', data: r.data, for: forKey } : { status: 'error', error: r.error })
  } catch {
    set({ status: 'error', error: UNREACHABLE })
  }
}

function StepForm({
  session: s,
  j,
  view: v,
  serverDraft,
}: {
  session: Session
  j: number
  view: View
  serverDraft: unknown
}) {
  const t = v.due?.t ?? 1
  const sql = v.task.kind === 'sql'
  const id = useId()
  const shownAt = useRef(Date.now())
  const msField = useRef<HTMLInputElement | null>(null)
  const formBox = useRef<HTMLDivElement>(null)
  const [thought, setThought] = useState('')
  const [type, setType] = useState<ActionType>(v.actions[0] ?? 'search')
  const [arg, setArg] = useState('')
  const [suggestion, setSuggestion] = useState<'opened' | 'copied' | null>(null)
  const [touched, setTouched] = useState(false)
  const [preview, setPreview] = useState<Asked<RehacPreview>>({ status: 'idle' })
  const [suggested, setSuggested] = useState<Asked<RehacSuggestion>>({ status: 'idle' })
  const draftStatus = useTurnDraft<StepDraft>({
    sessionId: s.id,
    seq: j,
    serverDraft,
    draft: { thought, type, arg, suggestion },
    touched,
    restore: (d) => {
      setThought(d.thought)
      if (d.type && v.actions.includes(d.type)) setType(d.type)
      setArg(d.arg)
      setSuggestion(d.suggestion)
    },
    read: readDraft,
    // A step page follows the trajectory: the drafts of its sent steps are dropped.
    pruneEarlier: true,
  })
  const needsArg = type !== 'submit'
  const action = { type, arg: type === 'submit' ? '' : arg }
  const actionKey = `${action.type}\u0000${action.arg.trim()}`
  const edit =
    <T,>(set: (x: T) => void) =>
    (x: T) => {
      set(x)
      setTouched(true)
    }

  const run = () => {
    if (preview.status !== 'pending') void askServer(() => previewStepAction(s.id, j, action), actionKey, setPreview)
  }
  const suggest = () => {
    if (suggested.status === 'pending') return
    void askServer(
      () => suggestStepAction(s.id, j),
      '',
      (a) => {
        setSuggested(a)
        if (a.status === 'done') edit(setSuggestion)(suggestion ?? 'opened')
      },
    )
  }
  const useIt = () => {
    if (suggested.status !== 'done') return
    const d = suggested.data
    if (!sql && d.thought) setThought(d.thought)
    if (d.action && (v.actions as readonly string[]).includes(d.action.type)) {
      setType(d.action.type as ActionType)
      setArg(d.action.arg)
    }
    edit(setSuggestion)('copied')
  }
  useShortcuts({ kind: 'step', task: sql ? 'sql' : 'qa' }, (c) => {
    if (c.kind === 'send') formBox.current?.querySelector('form')?.requestSubmit()
    else if (c.kind === 'preview') run()
    else if (c.kind === 'suggest') suggest()
    else if (c.kind === 'use') useIt()
    else if (c.kind === 'action' && v.actions.includes(c.type)) {
      edit(setType)(c.type)
      // On to the argument once it shows (submit has none: the Action select keeps the focus).
      setTimeout(() => (document.getElementById(`${id}-arg`) ?? document.getElementById(`${id}-action`))?.focus(), 0)
    }
  })

  const argLabel = sql ? 'SQL statement' : type === 'finish' ? 'Answer' : type === 'lookup' ? 'Keyword' : 'Entity'
  return (
    <Card title={`Your step ${t} (of at most ${v.threshold})`}>
      {/* The time on the step is written into the form as it is sent (capture runs before the form's submit). */}
      <div
        ref={formBox}
        onSubmitCapture={() => {
          if (msField.current) msField.current.value = String(Date.now() - shownAt.current)
        }}
      >
        <ActionForm action={submitTurnAction} className="space-y-3">
          <TurnHiddenFields session={s} seq={j} />
          <input type="hidden" name="ms" ref={msField} defaultValue="" />
          <input type="hidden" name="suggestion" value={suggestion ?? ''} />
          {sql ? null : (
            <div>
              <label htmlFor={`${id}-thought`} className={label}>
                Thought {t}
              </label>
              <textarea
                id={`${id}-thought`}
                name="thought"
                rows={2}
                maxLength={4000}
                className={box}
                required
                value={thought}
                onChange={(e) => edit(setThought)(e.target.value)}
              />
            </div>
          )}
          <div>
            <label htmlFor={`${id}-action`} className={label}>
              Action
            </label>
            <select
              id={`${id}-action`}
              name="actionType"
              value={type}
              onChange={(e) => edit(setType)(e.target.value as ActionType)}
              className={box}
            >
              {v.actions.map((a) => (
                <option key={a} value={a}>
                  {ACTION_LABELS[a]}
                </option>
              ))}
            </select>
          </div>
          {needsArg ? (
            <div>
              <label htmlFor={`${id}-arg`} className={label}>
                {argLabel}
              </label>
              {sql ? (
                <textarea
                  id={`${id}-arg`}
                  name="actionArg"
                  rows={4}
                  maxLength={4000}
                  className={`${box} font-mono`}
                  spellCheck={false}
                  value={arg}
                  onChange={(e) => edit(setArg)(e.target.value)}
                />
              ) : (
                <input
                  id={`${id}-arg`}
                  name="actionArg"
                  maxLength={4000}
                  autoComplete="off"
                  className={box}
                  value={arg}
                  onChange={(e) => edit(setArg)(e.target.value)}
                />
              )}
            </div>
          ) : null}
          <div className="flex flex-wrap items-center gap-2">
            <button
              type="button"
              className={button}
              onClick={run}
              disabled={preview.status === 'pending'}
              aria-keyshortcuts="Alt+R"
            >
              Run
            </button>
            <button
              type="button"
              className={button}
              onClick={suggest}
              disabled={suggested.status === 'pending'}
              aria-keyshortcuts="Alt+G"
            >
              Show a suggestion
            </button>
            <SubmitButton pendingText="Sending…">Send step</SubmitButton>
            <span role="status" className="text-xs text-stone-500">
              {draftStatus}
            </span>
          </div>
          <PreviewPanel preview={preview} current={actionKey} />
          <SuggestionPanel suggested={suggested} onUse={useIt} />
          <HelpLine form={{ kind: 'step', task: sql ? 'sql' : 'qa' }} />
        </ActionForm>
      </div>
    </Card>
  )
}

function Panel({ title, children }: { title: string; children: ReactNode }) {
  const id = useId()
  return (
    <section aria-labelledby={id} className="rounded-md border border-stone-200 bg-stone-50 p-3 text-sm">
      <h3 id={id} className="mb-1 font-medium text-stone-800">
        {title}
      </h3>
      {children}
    </section>
  )
}

/** The Observation "Run" got, marked when the action has changed since; its pending and error states. */
function PreviewPanel({ preview, current }: { preview: Asked<RehacPreview>; current: string }) {
  return (
    <div aria-live="polite">
      {preview.status === 'idle' ? (
        <p className="text-xs text-stone-500">
          Run shows the Observation this action would get, without sending the step.
        </p>
      ) : preview.status === 'pending' ? (
        <p className="text-sm text-stone-600">Running…</p>
      ) : preview.status === 'error' ? (
        <p role="alert" className="text-sm text-red-700">
          Could not run the action: {preview.error}
        </p>
      ) : (
        <Panel title="Observation (preview, not sent)">
          {preview.for !== current ? (
            <p className="mb-1 text-xs text-amber-700">
              The action has changed since: Run again to see its Observation.
            </p>
          ) : null}
          <pre className={`whitespace-pre-wrap font-sans ${preview.data.ok ? 'text-stone-800' : 'text-red-700'}`}>
            {preview.data.observation || '(empty)'}
          </pre>
        </Panel>
      )}
    </div>
  )
}

/** The agent's proposal (text only), and "Use it" to copy it into the fields. */
function SuggestionPanel({ suggested, onUse }: { suggested: Asked<RehacSuggestion>; onUse: () => void }) {
  if (suggested.status === 'idle') return null
  if (suggested.status === 'pending') return <p className="text-sm text-stone-600">Asking the agent…</p>
  if (suggested.status === 'error')
    return (
      <p role="alert" className="text-sm text-red-700">
        {suggested.error}
      </p>
    )
  const d = suggested.data
  const usable = !!d.thought || !!d.action
  return (
    <Panel title="The agent’s suggestion">
      {d.thought ? <p className="whitespace-pre-wrap">Thought: {d.thought}</p> : null}
      {d.action ? (
        <p className="whitespace-pre-wrap font-mono">
          Action: {renderAction({ type: d.action.type as TrajectoryActionType, arg: d.action.arg })}
        </p>
      ) : (
        <p className="whitespace-pre-wrap text-stone-600">
          The agent’s reply is not a step of this task: {d.raw || '(empty)'}
        </p>
      )}
      <button type="button" className={`${button} mt-2`} onClick={onUse} disabled={!usable} aria-keyshortcuts="Alt+U">
        Use it
      </button>
    </Panel>
  )
}
