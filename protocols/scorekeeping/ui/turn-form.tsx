'use client'

import { useEffect, useRef } from 'react'
import { submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import type { TurnFormProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { ScorekeepingSessionView as View } from '@/protocols/scorekeeping/server/results'

/**
 * The answerer's turn for a person. A request is answered with one line (Enter sends); a side
 * question with Yes or No (keys `y` / `n`, or the buttons). Parley adds the tags the game expects
 * ("ANSWER: …", "ASIDE: yes|no"), so people are measured on the same game as models.
 */
export function ScorekeepingTurnForm({ session: s }: TurnFormProps) {
  const view = s.view as View
  const ask = s.ask
  const box = useRef<HTMLDivElement | null>(null)
  const isProbe = ask?.kind === 'probe-answer'
  /** The choice goes in the hidden field, then the form is sent (a clicked button's value is not in FormData). */
  const choose = (answer: 'yes' | 'no') => {
    const form = box.current?.querySelector('form')
    const field = form?.querySelector<HTMLInputElement>('input[name="answer"]')
    if (!form || !field || form.getAttribute('aria-busy') === 'true') return
    field.value = answer
    form.requestSubmit()
  }
  // Each new question takes the focus as it arrives (on the page's first load, and when it comes in
  // live after the last answer): the answer box for a request, the question with its Yes / No for a
  // side question, so the keyboard and a screen reader are where the person has to answer.
  const j = ask?.j
  useEffect(() => {
    if (j === undefined) return
    const target = box.current?.querySelector<HTMLElement>(isProbe ? '[data-probe]' : '#sk-reply')
    target?.focus()
  }, [j, isProbe])
  useEffect(() => {
    if (!isProbe) return
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return
      if (e.ctrlKey || e.metaKey || e.altKey || (e.key !== 'y' && e.key !== 'n')) return
      e.preventDefault()
      choose(e.key === 'y' ? 'yes' : 'no')
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  })
  if (!ask) return null
  const lastQuestion = [...view.probing.flatMap((r) => r.probes.flatMap((p) => p.tries))].find(
    (t) => t.seq === ask.j - 1,
  )
  const request = view.dialogue.at(-1)
  return (
    <Card title={isProbe ? 'Side question (not part of the conversation)' : 'Your answer'}>
      <div ref={box}>
        <ActionForm action={submitTurnAction} key={ask.j}>
          <input type="hidden" name="sessionId" value={s.id} />
          <input type="hidden" name="seq" value={ask.j} />
          <input type="hidden" name="protocol" value={s.protocol} />
          {isProbe ? (
            <>
              <p
                id={`sk-probe-${ask.j}`}
                className="text-sm text-stone-800"
                data-testid="probe-question"
                data-probe
                tabIndex={-1}
              >
                {lastQuestion?.question ?? 'Answer yes or no.'}
              </p>
              <p className="text-xs text-stone-500">
                Parley sends your choice as “{view.words.aside}yes” or “{view.words.aside}no”. Keys: <kbd>y</kbd> yes,{' '}
                <kbd>n</kbd> no.
              </p>
              <input type="hidden" name="answer" defaultValue="" />
              <div className="flex gap-2">
                <button
                  type="button"
                  onClick={() => choose('yes')}
                  className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-brand-700"
                >
                  Yes
                </button>
                <button
                  type="button"
                  onClick={() => choose('no')}
                  className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm font-medium text-stone-800 hover:bg-stone-100"
                >
                  No
                </button>
              </div>
            </>
          ) : (
            <>
              {request?.kind === 'request' ? (
                <p className="text-sm text-stone-800" data-testid="request">
                  {request.text}
                </p>
              ) : null}
              <label className="block text-sm font-medium text-stone-800" htmlFor="sk-reply">
                Your answer, in one short sentence
              </label>
              <input
                id="sk-reply"
                name="reply"
                autoComplete="off"
                maxLength={2000}
                className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm"
              />
              <p className="text-xs text-stone-500">Parley adds “{view.words.answer}” before it. Enter sends.</p>
              <SubmitButton pendingText="Sending…">Send</SubmitButton>
            </>
          )}
        </ActionForm>
      </div>
    </Card>
  )
}
