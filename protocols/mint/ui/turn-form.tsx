'use client'

import { useEffect, useRef, useState } from 'react'
import { saveDraftAction, submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import type { TurnFormProps } from '@/components/protocols/types'
import { TurnHiddenFields } from '@/components/sessions/turn-fields'
import { Card } from '@/components/ui/card'
import type { MintSessionView as View } from '@/protocols/mint/server/views'
import { commandFor, draftKey, isField } from '@/protocols/mint/ui/format'

const box = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-2 font-mono text-sm shadow-sm'

/**
 * A person's turn in a MINT episode. As the evaluated model: the reply in a textarea, written as the
 * model would (<thought>, then <execute> or <solution>). As the expert (the feedback page): the ground
 * truth behind a "do not disclose" banner when the run gives it, and a feedback textarea, or GOOD / BAD
 * in binary mode. Keyboard-first: Ctrl/Cmd+Enter sends; in binary mode g and b choose GOOD and BAD
 * (never while typing in a field). The text is kept as a draft (this browser at once, the server shortly
 * after); the time from the form's showing is sent as elapsedMs.
 */
export function MintTurnForm({ session: s }: TurnFormProps) {
  const ask = s.ask
  if (!ask) return null
  return <TurnForm key={`${s.id}:${ask.j}`} session={s} j={ask.j} kind={ask.kind ?? 'turn'} />
}

function TurnForm({ session: s, j, kind }: { session: TurnFormProps['session']; j: number; kind: string }) {
  const v = s.view as View
  const feedback = kind === 'feedback'
  const binary = feedback && v.feedback.mode === 'binary'
  const [text, setText] = useState('')
  const [touched, setTouched] = useState(false)
  const [shownAt] = useState(() => Date.now())
  const formBox = useRef<HTMLDivElement>(null)
  const elapsedField = useRef<HTMLInputElement>(null)
  const draftStatus = useDraft(
    s.id,
    j,
    (s as { draft?: { data?: unknown } | null }).draft?.data,
    text,
    touched,
    setText,
  )
  const send = () => formBox.current?.querySelector('form')?.requestSubmit()
  // The time from the form's showing, written into the hidden field as the form is submitted (before it is read).
  const stamp = () => {
    if (elapsedField.current) elapsedField.current.value = String(Date.now() - shownAt)
  }
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const c = commandFor(e, { binary, inField: isField(document.activeElement) })
      if (!c) return
      e.preventDefault()
      if (c.kind === 'send') send()
      else {
        setText(c.value)
        setTouched(true)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  })
  const title = feedback ? 'Your feedback as the expert' : 'Your turn as the model'
  return (
    <Card title={title}>
      {feedback && v.groundTruth !== null ? (
        <div role="note" className="mb-3 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900">
          <p className="font-semibold uppercase tracking-wide">Do not disclose: the correct solution</p>
          <p className="text-xs">Guide the model towards it; never give it away.</p>
          <pre className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap font-mono text-xs">{v.groundTruth}</pre>
        </div>
      ) : null}
      <div ref={formBox} onSubmitCapture={stamp}>
        <ActionForm action={submitTurnAction} className="space-y-3">
          <TurnHiddenFields session={s} seq={j} />
          <input type="hidden" name="elapsedMs" ref={elapsedField} defaultValue="" />
          {binary ? (
            <fieldset className="flex gap-3 text-sm">
              <legend className="mb-1 text-sm font-medium text-stone-800">Is the latest turn good?</legend>
              {(['GOOD', 'BAD'] as const).map((val) => (
                <label
                  key={val}
                  className={`cursor-pointer rounded-md border px-4 py-2 ${text === val ? (val === 'GOOD' ? 'border-emerald-600 bg-emerald-50' : 'border-red-600 bg-red-50') : 'border-stone-300'}`}
                >
                  <input
                    type="radio"
                    name="text"
                    value={val}
                    checked={text === val}
                    onChange={() => {
                      setText(val)
                      setTouched(true)
                    }}
                    className="mr-2"
                  />
                  {val} <kbd className="ml-1 text-xs text-stone-500">{val === 'GOOD' ? 'g' : 'b'}</kbd>
                </label>
              ))}
            </fieldset>
          ) : (
            <label className="block text-sm font-medium text-stone-800">
              {feedback
                ? 'Feedback on the latest turn'
                : 'Reply (<thought> … </thought>, then <execute> … </execute> or <solution> … </solution>)'}
              <textarea
                name="text"
                rows={feedback ? 5 : 10}
                className={box}
                value={text}
                onChange={(e) => {
                  setText(e.target.value)
                  setTouched(true)
                }}
                required
              />
            </label>
          )}
          <div className="flex items-center gap-3">
            <SubmitButton pendingText="Sending…">{feedback ? 'Send feedback' : 'Send reply'}</SubmitButton>
            <button type="button" className="text-sm text-stone-600 underline" onClick={send}>
              Send (Ctrl/⌘+Enter)
            </button>
            <span className="text-xs text-stone-500" aria-live="polite">
              {draftStatus}
            </span>
          </div>
          <p className="text-xs text-stone-500">
            Ctrl/⌘+Enter sends{binary ? '; g and b choose GOOD and BAD (outside a text field)' : ''}.
          </p>
        </ActionForm>
      </div>
    </Card>
  )
}

/** The turn's draft: restored once (the server's copy over this browser's), then kept on every change. */
function useDraft(
  sessionId: string,
  j: number,
  serverDraft: unknown,
  text: string,
  touched: boolean,
  restore: (t: string) => void,
): string {
  const key = draftKey(sessionId, j)
  const [status, setStatus] = useState('')
  const once = useRef(false)
  const restoreRef = useRef(restore)
  useEffect(() => {
    if (once.current) return
    once.current = true
    const server = (serverDraft as { text?: unknown } | null | undefined)?.text
    let local: string | null = null
    try {
      local = localStorage.getItem(key)
    } catch {}
    const draft = typeof server === 'string' ? server : local
    if (draft) {
      restoreRef.current(draft)
      setStatus('Draft restored')
    }
  }, [key, serverDraft])
  useEffect(() => {
    if (!touched) return
    try {
      localStorage.setItem(key, text)
    } catch {}
    setStatus('Saving draft…')
    const timer = setTimeout(() => {
      saveDraftAction(sessionId, j, { text })
        .then((ok) => setStatus(ok ? 'Draft saved' : 'Draft kept in this browser only'))
        .catch(() => setStatus('Draft kept in this browser only'))
    }, 600)
    return () => clearTimeout(timer)
  }, [key, text, touched, sessionId, j])
  return status
}
