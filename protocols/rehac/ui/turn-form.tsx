'use client'

import { useEffect, useRef, useState } from 'react'
import { submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import type { TurnFormProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { ActionType } from '@/protocols/rehac/core/protocol'
import type { RehacSessionView as View } from '@/protocols/rehac/server/views'

const ACTION_LABELS: Record<ActionType, string> = {
  search: 'Search[entity]',
  lookup: 'Lookup[keyword]',
  finish: 'Finish[answer]',
  sql: 'Run an SQL statement',
  submit: 'submit (the last statement is the answer)',
}

const box = 'mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm shadow-sm'

/**
 * A person's turn: deciding who acts (a person in the decider seat), or writing step t (Thought and
 * Action for QA, a statement or submit for SQL). The time from the form's showing to its sending is
 * sent as `ms`.
 */
export function RehacTurnForm({ session: s }: TurnFormProps) {
  const v = s.view as View
  const ask = s.ask
  const shownAt = useRef(Date.now())
  const [type, setType] = useState<ActionType>(v.actions[0] ?? 'search')
  const msField = useRef<HTMLInputElement | null>(null)
  useEffect(() => {
    shownAt.current = Date.now()
  }, [ask?.j])
  if (!ask || !v.due) return null
  const hidden = (
    <>
      <input type="hidden" name="sessionId" value={s.id} />
      <input type="hidden" name="seq" value={ask.j} />
      <input type="hidden" name="protocol" value={s.protocol} />
    </>
  )
  if (v.due.kind === 'decide')
    return (
      <Card title={`Who carries out step ${v.due.t}?`}>
        <ActionForm action={submitTurnAction} key={ask.j} className="space-y-3">
          {hidden}
          <fieldset className="flex gap-4 text-sm">
            <legend className="sr-only">Solver</legend>
            <label className="flex items-center gap-1">
              <input type="radio" name="solver" value="agent" defaultChecked /> The agent
            </label>
            <label className="flex items-center gap-1">
              <input type="radio" name="solver" value="human" /> The human
            </label>
          </fieldset>
          <SubmitButton pendingText="Sending…">Decide</SubmitButton>
        </ActionForm>
      </Card>
    )
  const sql = v.task.kind === 'sql'
  const needsArg = type !== 'submit'
  return (
    <Card title={`Your step ${v.due.t} (of at most ${v.threshold})`}>
      {/* The time on the step is written into the form as it is sent (capture runs before the form's submit). */}
      <div
        onSubmitCapture={() => {
          if (msField.current) msField.current.value = String(Date.now() - shownAt.current)
        }}
      >
        <ActionForm action={submitTurnAction} key={ask.j} className="space-y-3">
          {hidden}
          <input type="hidden" name="ms" ref={msField} defaultValue="" />
          {sql ? null : (
            <label className="block text-sm font-medium text-stone-800">
              Thought {v.due.t}
              <textarea name="thought" rows={2} maxLength={4000} className={box} required />
            </label>
          )}
          <label className="block text-sm font-medium text-stone-800">
            Action
            <select
              name="actionType"
              value={type}
              onChange={(e) => setType(e.target.value as ActionType)}
              className={box}
            >
              {v.actions.map((a) => (
                <option key={a} value={a}>
                  {ACTION_LABELS[a]}
                </option>
              ))}
            </select>
          </label>
          {needsArg ? (
            <label className="block text-sm font-medium text-stone-800">
              {sql ? 'SQL statement' : type === 'finish' ? 'Answer' : type === 'lookup' ? 'Keyword' : 'Entity'}
              {sql ? (
                <textarea
                  name="actionArg"
                  rows={4}
                  maxLength={4000}
                  className={`${box} font-mono`}
                  spellCheck={false}
                />
              ) : (
                <input name="actionArg" maxLength={4000} autoComplete="off" className={box} />
              )}
            </label>
          ) : null}
          <SubmitButton pendingText="Sending…">Send step</SubmitButton>
        </ActionForm>
      </div>
    </Card>
  )
}
