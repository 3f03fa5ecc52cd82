'use client'

import { useMemo, useState } from 'react'
import { submitHumanMessageAction } from '@/app/actions/pxp'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import { allowedTags, category as categoryOf, deriveTag } from '@/lib/protocols/pxp/agent'
import type { PxpTag } from '@/lib/protocols/pxp/tags'

const REASONS: Record<string, string> = {
  A: 'The prediction matches and the explanation agrees: you ratify.',
  B: 'The prediction matches but the explanation does not agree.',
  C: 'The explanation agrees but the prediction does not match.',
  D: 'Neither the prediction nor the explanation agrees with yours.',
}

/**
 * The expert's response: two judgements about the machine's answer, their own answer, and the tag
 * Procedure 2 derives from those (shown with the reason; another allowed tag may be chosen).
 */
export function RespondForm({
  sessionId,
  j,
  k,
  ownPrev,
}: {
  sessionId: string
  j: number
  k: number
  ownPrev?: { y: string; e: string }
}) {
  const [match, setMatch] = useState<boolean | null>(null)
  const [agree, setAgree] = useState<boolean | null>(null)
  const [y, setY] = useState(ownPrev?.y ?? '')
  const [e, setE] = useState(ownPrev?.e ?? '')
  const [chosen, setChosen] = useState<PxpTag | ''>('')
  const derived = useMemo(() => {
    if (match === null || agree === null) return null
    const cat = categoryOf(match, agree)
    const prev = j === 2 || !ownPrev ? { y, e } : ownPrev
    const changed = prev.y.trim() !== y.trim() || prev.e.trim() !== e.trim()
    return { tag: deriveTag({ j, k, category: cat, changed }), cat, changed }
  }, [match, agree, y, e, j, k, ownPrev])
  const options = derived ? allowedTags(j, k, derived.tag) : []
  const yesNo = (name: string, value: boolean | null, set: (v: boolean) => void, label: string) => (
    <fieldset className="text-sm">
      <legend className="font-medium text-stone-800">{label}</legend>
      <div className="mt-1 flex gap-4">
        {[true, false].map((v) => (
          <label key={String(v)} className="flex items-center gap-1">
            <input type="radio" name={name} value={String(v)} checked={value === v} onChange={() => set(v)} required />{' '}
            {v ? 'Yes' : 'No'}
          </label>
        ))}
      </div>
    </fieldset>
  )
  return (
    <ActionForm action={submitHumanMessageAction}>
      <input type="hidden" name="sessionId" value={sessionId} />
      <input type="hidden" name="seq" value={j} />
      {j === 1 ? (
        <p className="text-sm text-stone-600" data-testid="derived-tag">
          Tag: <strong>INIT</strong>. You open the session: give your prediction and explanation; your partner judges
          them next.
        </p>
      ) : (
        <>
          {yesNo('matchPrev', match, setMatch, 'Does the prediction match yours?')}
          {yesNo('agreePrev', agree, setAgree, 'Does the explanation agree with yours?')}
        </>
      )}
      <div>
        <label htmlFor="pxp-y" className="block text-sm font-medium text-stone-800">
          Your prediction
        </label>
        <input
          id="pxp-y"
          name="prediction"
          value={y}
          onChange={(ev) => setY(ev.target.value)}
          className="mt-1 block w-full rounded-md border border-stone-300 px-3 py-1.5 text-sm"
        />
      </div>
      <div>
        <label htmlFor="pxp-e" className="block text-sm font-medium text-stone-800">
          Your explanation
        </label>
        <textarea
          id="pxp-e"
          name="explanation"
          rows={4}
          value={e}
          onChange={(ev) => setE(ev.target.value)}
          className="mt-1 block w-full rounded-md border border-stone-300 px-3 py-1.5 text-sm"
        />
      </div>
      {derived && j > 1 && (
        <div className="rounded-md border border-stone-200 bg-stone-50 p-3 text-sm" data-testid="derived-tag">
          <p>
            Tag: <strong>{derived.tag}</strong>. {REASONS[derived.cat]}
            {derived.tag !== 'RATIFY' &&
              derived.tag !== 'REJECT' &&
              (derived.changed ? ' You changed your answer: REVISE.' : ' You kept your answer: REFUTE.')}
          </p>
          <label className="mt-2 flex items-center gap-2">
            <span>Send as</span>
            <select
              name="tag"
              value={chosen || derived.tag}
              onChange={(ev) => setChosen(ev.target.value as PxpTag)}
              className="rounded border border-stone-300 bg-white px-2 py-1"
            >
              {options.map((t) => (
                <option key={t} value={t}>
                  {t}
                  {t === derived.tag ? ' (derived)' : ''}
                </option>
              ))}
            </select>
          </label>
          {j <= k && (
            <p className="mt-1 text-xs text-stone-500">
              REJECT becomes available after message {k} (this is message {j}).
            </p>
          )}
        </div>
      )}
      <SubmitButton pendingText="Sending; your partner is answering…">Send</SubmitButton>
    </ActionForm>
  )
}
