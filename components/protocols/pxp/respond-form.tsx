'use client'

import { useEffect, useMemo, useRef, useState } from 'react'
import { submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import { TurnHiddenFields } from '@/components/sessions/turn-fields'
import { allowedTags, category as categoryOf, deriveTag } from '@/lib/protocols/pxp/agent'
import type { PxpTag } from '@/lib/protocols/pxp/tags'

const REASONS: Record<string, string> = {
  A: 'The prediction matches and the explanation agrees: you ratify.',
  B: 'The prediction matches but the explanation does not agree.',
  C: 'The explanation agrees but the prediction does not match.',
  D: 'Neither the prediction nor the explanation agrees with yours.',
}

export const SHORTCUTS: Array<[string, string]> = [
  ['y / n', 'The prediction matches yours: yes / no'],
  ['a / d', 'The explanation agrees with yours: yes / no'],
  ['t', 'Cycle through the allowed tags'],
  ['p / e', 'Go to your prediction / explanation'],
  ['Ctrl+Enter', 'Send (also while typing)'],
  ['g', 'Study guidelines'],
  ['?', 'This help'],
  ['Esc', 'Close a dialog'],
]

/**
 * The expert's response: two judgements about the machine's answer, their own answer, and the tag
 * Procedure 2 derives from those (shown with the reason; another allowed tag may be chosen).
 */
export function RespondForm({
  sessionId,
  protocol,
  j,
  k,
  ownPrev,
}: {
  sessionId: string
  protocol: string
  j: number
  k: number
  ownPrev?: { y: string; e: string }
}) {
  const [match, setMatch] = useState<boolean | null>(null)
  const [agree, setAgree] = useState<boolean | null>(null)
  const [y, setY] = useState(ownPrev?.y ?? '')
  const [e, setE] = useState(ownPrev?.e ?? '')
  const [chosen, setChosen] = useState<PxpTag | ''>('')
  const [saved, setSaved] = useState<'restored' | 'pending' | 'saved' | null>(null)
  const formRef = useRef<HTMLDivElement>(null)
  const draftKey = `parley:draft:${sessionId}:${j}`
  // Restore a draft of this very message (same session, same j) once, on load.
  useEffect(() => {
    try {
      const raw = localStorage.getItem(draftKey)
      if (!raw) return
      const d = JSON.parse(raw) as {
        match?: boolean | null
        agree?: boolean | null
        y?: string
        e?: string
        chosen?: PxpTag | ''
      }
      if (d.match !== undefined) setMatch(d.match)
      if (d.agree !== undefined) setAgree(d.agree)
      if (typeof d.y === 'string') setY(d.y)
      if (typeof d.e === 'string') setE(d.e)
      if (d.chosen) setChosen(d.chosen)
      setSaved('restored')
    } catch {}
  }, [draftKey])
  // Drafts of earlier messages of this session were sent: drop them.
  useEffect(() => {
    try {
      const prefix = `parley:draft:${sessionId}:`
      for (const key of Object.keys(localStorage))
        if (key.startsWith(prefix) && Number(key.slice(prefix.length)) < j) localStorage.removeItem(key)
    } catch {}
  }, [sessionId, j])
  // Keyboard-first: single keys never fire while typing; Ctrl/⌘+Enter sends from anywhere.
  const helpRef = useRef<HTMLDialogElement>(null)
  const optionsRef = useRef<PxpTag[]>([])
  const derivedRef = useRef<PxpTag | null>(null)
  useEffect(() => {
    const onKey = (ev: KeyboardEvent) => {
      if ((ev.ctrlKey || ev.metaKey) && ev.key === 'Enter') {
        ev.preventDefault()
        formRef.current?.closest('form')?.requestSubmit()
        return
      }
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return
      const t = ev.target as HTMLElement | null
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return
      const act: Record<string, () => void> = {
        y: () => setMatch(true),
        n: () => setMatch(false),
        a: () => setAgree(true),
        d: () => setAgree(false),
        t: () => {
          const opts = optionsRef.current
          if (!opts.length) return
          setChosen((c) => opts[(opts.indexOf((c || derivedRef.current) as PxpTag) + 1) % opts.length] as PxpTag)
        },
        e: () => document.getElementById('pxp-e')?.focus(),
        p: () => document.getElementById('pxp-y')?.focus(),
        '?': () => helpRef.current?.showModal(),
        g: () => window.dispatchEvent(new Event('parley:guidelines')),
      }
      const f = act[ev.key]
      if (!f || (j === 1 && 'ynadt'.includes(ev.key))) return
      ev.preventDefault()
      f()
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [j])
  // Autosave every change (debounced), and at once when the page goes away, so a reload, a crash or
  // a closed tab loses nothing.
  const latest = useRef<(() => void) | null>(null)
  useEffect(() => {
    const untouched =
      match === null && agree === null && y === (ownPrev?.y ?? '') && e === (ownPrev?.e ?? '') && !chosen
    if (untouched) {
      latest.current = null
      return
    }
    const save = () => {
      try {
        localStorage.setItem(draftKey, JSON.stringify({ match, agree, y, e, chosen }))
        setSaved('saved')
      } catch {}
    }
    latest.current = save
    setSaved((s) => (s === 'restored' ? s : 'pending'))
    const t = setTimeout(save, 300)
    return () => clearTimeout(t)
  }, [draftKey, match, agree, y, e, chosen, ownPrev])
  useEffect(() => {
    const flush = () => latest.current?.()
    window.addEventListener('pagehide', flush)
    return () => window.removeEventListener('pagehide', flush)
  }, [])
  const derived = useMemo(() => {
    if (match === null || agree === null) return null
    const cat = categoryOf(match, agree)
    const prev = j === 2 || !ownPrev ? { y, e } : ownPrev
    const changed = prev.y.trim() !== y.trim() || prev.e.trim() !== e.trim()
    return { tag: deriveTag({ j, k, category: cat, changed }), cat, changed }
  }, [match, agree, y, e, j, k, ownPrev])
  const options = derived ? allowedTags(j, k, derived.tag) : []
  optionsRef.current = options
  derivedRef.current = derived?.tag ?? null
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
    <ActionForm action={submitTurnAction}>
      <TurnHiddenFields session={{ id: sessionId, protocol }} seq={j} />
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
      <div ref={formRef} className="flex flex-wrap items-center gap-3">
        <SubmitButton pendingText="Sending; your partner is answering…">Send</SubmitButton>
        <span className="text-xs text-stone-500">Ctrl+Enter</span>
        <span role="status" className="text-xs text-stone-500" data-testid="draft-status">
          {saved === 'restored'
            ? 'Draft restored'
            : saved === 'saved'
              ? 'Draft saved'
              : saved === 'pending'
                ? 'Saving draft…'
                : ''}
        </span>
        <button
          type="button"
          onClick={() => helpRef.current?.showModal()}
          className="ml-auto text-xs text-brand-700 underline"
        >
          Keyboard shortcuts (?)
        </button>
      </div>
      <dialog ref={helpRef} aria-labelledby="shortcuts-title" className="rounded-lg p-0 shadow-xl backdrop:bg-black/30">
        <div className="w-80 p-5 text-sm">
          <h2 id="shortcuts-title" className="mb-3 text-base font-semibold">
            Keyboard shortcuts
          </h2>
          <dl className="grid grid-cols-[6rem_1fr] gap-y-1">
            {SHORTCUTS.map(([key, what]) => (
              <div key={key} className="contents">
                <dt>
                  <kbd className="rounded border border-stone-300 bg-stone-50 px-1.5 font-mono text-xs">{key}</kbd>
                </dt>
                <dd>{what}</dd>
              </div>
            ))}
          </dl>
          <p className="mt-3 text-xs text-stone-500">Single keys do nothing while you type in a field.</p>
          <div className="mt-4 text-right">
            <button
              type="button"
              onClick={() => helpRef.current?.close()}
              className="rounded-md border border-stone-300 px-3 py-1"
            >
              Close
            </button>
          </div>
        </div>
      </dialog>
    </ActionForm>
  )
}
