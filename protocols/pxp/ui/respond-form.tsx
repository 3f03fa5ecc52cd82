'use client'

import { useEffect, useMemo, useRef, useState } from 'react'
import { saveDraftAction, submitTurnAction } from '@/app/actions/sessions'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'
import { TurnHiddenFields } from '@/components/sessions/turn-fields'
import { type AnswerCheck, checkAnswerAction } from '@/protocols/pxp/ui/actions'
import { allowedTags, category as categoryOf, deriveTag } from '@/protocols/pxp/core/agent'
import type { PxpTag } from '@/protocols/pxp/core/tags'
import type { AnswerRules } from '@/protocols/pxp/server/answer'

const REASONS: Record<string, string> = {
  A: 'The prediction matches and the explanation agrees: you ratify.',
  B: 'The prediction matches but the explanation does not agree.',
  C: 'The explanation agrees but the prediction does not match.',
  D: 'Neither the prediction nor the explanation agrees with yours.',
}

/** The prediction as the hint quotes it: trimmed, long SMILES shortened. */
const short = (y: string) => {
  const t = y.trim()
  return t.length > 60 ? `${t.slice(0, 59)}…` : t
}

export const SHORTCUTS: Array<[string, string]> = [
  ['y / n', 'The prediction matches yours: yes / no'],
  ['1 – 9', 'Pick the task’s label of that number (when the task has labels)'],
  ['a / d', 'The explanation agrees with yours: yes / no'],
  ['t', 'Cycle through the allowed tags'],
  ['p / e', 'Go to your prediction / explanation'],
  ['Ctrl+Enter', 'Send (also while typing)'],
  ['g', 'Study guidelines'],
  ['?', 'This help'],
  ['Esc', 'Close a dialog'],
]

/**
 * The expert's response: two judgements about the partner's answer, their own answer, and the tag
 * Procedure 2 derives from those (shown with the reason; another allowed tag may be chosen).
 *
 * Every turn starts clean: nothing of the previous turn (judgements, answer, tag) is carried into the
 * next one, so a judgement about the partner's last answer is never sent again about its new one; the
 * person may start from their last answer with one explicit click. No tag is derived until both
 * questions are answered for this turn. The prediction follows the task's rules while it is typed
 * (a label picked from the task's set; SMILES parsed by RDKit, the reactants drawn), with Parley's own
 * MATCH beside the question as a hint; `sessions.submit` applies the same rules.
 */
export function RespondForm({
  sessionId,
  protocol,
  j,
  k,
  ownPrev,
  answer = { kind: 'text' },
  partner = 'your partner',
  serverDraft = null,
}: {
  sessionId: string
  protocol: string
  j: number
  k: number
  ownPrev?: { y: string; e: string }
  answer?: AnswerRules
  partner?: string
  /** This turn's draft as the server keeps it (`sessions.save-draft`), when there is one. */
  serverDraft?: Record<string, unknown> | null
}) {
  const [match, setMatch] = useState<boolean | null>(null)
  const [agree, setAgree] = useState<boolean | null>(null)
  const [y, setY] = useState('')
  const [e, setE] = useState('')
  const [chosen, setChosen] = useState<PxpTag | ''>('')
  const [saved, setSaved] = useState<'restored' | 'pending' | 'saved' | 'local' | null>(null)
  // The last check, with the session, the message and the exact text it was computed for: it is shown
  // only while all three are still what the form holds.
  const [check, setCheck] = useState<(AnswerCheck & { for: string; sessionId: string }) | null>(null)
  const formRef = useRef<HTMLDivElement>(null)
  const labels = answer.kind === 'labels' ? answer.labels : null
  const draftKey = `parley:draft:${sessionId}:${j}`
  // Restore a draft of this very message (same session, same j) once, on load: the one kept on the
  // server (any browser), else this browser's copy.
  const restoredOnce = useRef(false)
  useEffect(() => {
    // Once: a later refresh of the page (the live view) must not overwrite what is being typed.
    if (restoredOnce.current) return
    restoredOnce.current = true
    try {
      const raw = localStorage.getItem(draftKey)
      const d = (serverDraft ?? (raw ? JSON.parse(raw) : null)) as {
        match?: boolean | null
        agree?: boolean | null
        y?: string
        e?: string
        chosen?: PxpTag | ''
      } | null
      if (!d) return
      if (typeof d.match === 'boolean') setMatch(d.match)
      if (typeof d.agree === 'boolean') setAgree(d.agree)
      if (typeof d.y === 'string') setY(d.y)
      if (typeof d.e === 'string') setE(d.e)
      if (d.chosen) setChosen(d.chosen)
      setSaved('restored')
    } catch {}
  }, [draftKey, serverDraft])
  // Drafts of earlier messages of this session were sent: drop them.
  useEffect(() => {
    try {
      const prefix = `parley:draft:${sessionId}:`
      for (const key of Object.keys(localStorage))
        if (key.startsWith(prefix) && Number(key.slice(prefix.length)) < j) localStorage.removeItem(key)
    } catch {}
  }, [sessionId, j])
  // The prediction checked as it is typed (debounced), with the rules the server applies when it is
  // sent; a late answer for an older text, or one the server computed for another message, is ignored.
  // An empty field needs no check: there is nothing to judge or draw.
  useEffect(() => {
    let current = true
    if (!y.trim()) return
    const t = setTimeout(() => {
      checkAnswerAction(sessionId, y)
        .then((r) => {
          if (current && r && r.j === j) setCheck({ ...r, for: y, sessionId })
        })
        .catch(() => {})
    }, 250)
    return () => {
      current = false
      clearTimeout(t)
    }
  }, [sessionId, j, y])
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
      // 1–9 pick the task's label of that number.
      const n = /^[1-9]$/.test(ev.key) ? Number(ev.key) : 0
      if (n && labels?.[n - 1]) {
        ev.preventDefault()
        setY(labels[n - 1] as string)
        return
      }
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
  }, [j, labels])
  // Autosave every change (debounced), and at once when the page goes away, so a reload, a crash or
  // a closed tab loses nothing.
  const latest = useRef<(() => void) | null>(null)
  useEffect(() => {
    const untouched = match === null && agree === null && y === '' && e === '' && !chosen
    if (untouched) {
      latest.current = null
      return
    }
    const data = { match, agree, y, e, chosen }
    const save = () => {
      try {
        localStorage.setItem(draftKey, JSON.stringify(data))
      } catch {}
    }
    latest.current = save
    setSaved((s) => (s === 'restored' ? s : 'pending'))
    // This browser's copy at once, the server's (any browser) shortly after.
    const t = setTimeout(save, 300)
    const t2 = setTimeout(() => {
      saveDraftAction(sessionId, j, data)
        .then((ok) => setSaved(ok ? 'saved' : 'local'))
        .catch(() => setSaved('local'))
    }, 600)
    return () => {
      clearTimeout(t)
      clearTimeout(t2)
    }
  }, [draftKey, sessionId, j, match, agree, y, e, chosen])
  useEffect(() => {
    const flush = () => latest.current?.()
    window.addEventListener('pagehide', flush)
    return () => window.removeEventListener('pagehide', flush)
  }, [])
  // A tag only once both questions are answered for this turn.
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
  const current = check && check.for === y && check.j === j && check.sessionId === sessionId ? check : null
  const problem = y.trim() && current?.valid === false ? current.error : null
  // MATCH of the partner's latest prediction and the one in the field: only for the text on screen,
  // never one computed for an earlier text or turn (null until this text's check is back).
  const hint = y.trim() ? (current?.match ?? null) : null
  const validate = () => {
    if (j > 1 && (match === null || agree === null)) return 'Answer both questions about your partner’s message.'
    if (!y.trim()) return labels ? 'Choose your prediction from the labels.' : 'Write your prediction.'
    if (problem) return `Your prediction cannot be sent: ${problem}`
    if (!e.trim()) return 'Write your explanation.'
    return null
  }
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
    <ActionForm action={submitTurnAction} validate={validate}>
      <TurnHiddenFields session={{ id: sessionId, protocol }} seq={j} />
      {j === 1 ? (
        <p className="text-sm text-stone-600" data-testid="derived-tag">
          Tag: <strong>INIT</strong>. You open the session: give your prediction and explanation; your partner judges
          them next.
        </p>
      ) : (
        <>
          {yesNo('matchPrev', match, setMatch, 'Does the prediction match yours?')}
          <p className="-mt-1 text-xs text-stone-600" data-testid="match-hint">
            {hint === null
              ? y.trim()
                ? ''
                : `Parley’s MATCH compares ${partner}’s prediction with yours once you give it.`
              : `Parley’s MATCH (a hint; your answer counts): ${partner}’s prediction ${hint ? 'matches' : 'does not match'} yours (“${short(y)}”).`}
          </p>
          {yesNo('agreePrev', agree, setAgree, 'Does the explanation agree with yours?')}
        </>
      )}
      <div>
        <div className="flex items-baseline justify-between gap-2">
          <label htmlFor="pxp-y" className="block text-sm font-medium text-stone-800">
            Your prediction
          </label>
          {ownPrev && (
            <button
              type="button"
              className="text-xs text-brand-700 underline"
              onClick={() => {
                setY(ownPrev.y)
                setE(ownPrev.e)
              }}
            >
              Start from my last answer
            </button>
          )}
        </div>
        {labels ? (
          <select
            id="pxp-y"
            name="prediction"
            value={y}
            onChange={(ev) => setY(ev.target.value)}
            aria-describedby="pxp-y-hint"
            className="mt-1 block w-full rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
          >
            <option value="">Choose a label…</option>
            {labels.map((l, i) => (
              <option key={l} value={l}>
                {i < 9 ? `${i + 1}. ` : ''}
                {l}
              </option>
            ))}
            {y && !labels.includes(y) && <option value={y}>{y} (not a label of this task)</option>}
          </select>
        ) : (
          <input
            id="pxp-y"
            name="prediction"
            value={y}
            onChange={(ev) => setY(ev.target.value)}
            autoComplete="off"
            spellCheck={answer.kind === 'smiles' ? false : undefined}
            aria-invalid={problem ? true : undefined}
            aria-describedby="pxp-y-hint"
            className={`mt-1 block w-full rounded-md border px-3 py-1.5 text-sm ${problem ? 'border-red-400' : 'border-stone-300'} ${answer.kind === 'smiles' ? 'font-mono' : ''}`}
          />
        )}
        <p id="pxp-y-hint" className="mt-1 text-xs text-stone-500">
          {labels
            ? 'One of this task’s labels (keys 1–9 pick one when no field has focus).'
            : answer.kind === 'smiles'
              ? 'The reactants as SMILES, separated by “.”; checked by RDKit as you type.'
              : ''}
        </p>
        {problem && (
          <p className="mt-1 text-xs text-red-700" role="alert" data-testid="prediction-problem">
            {problem}
          </p>
        )}
        {answer.kind === 'smiles' && current?.valid && current.svg && (
          <figure className="mt-2" data-testid="own-reactants">
            <div
              role="img"
              aria-label={`Your reactants: ${y.trim()}`}
              className="overflow-hidden rounded border border-stone-200 bg-white [&_svg]:h-auto [&_svg]:max-w-full"
              // RDKit's SVG, sanitised on the server (sanitizeSvg) like every molecule drawing.
              dangerouslySetInnerHTML={{ __html: current.svg }}
            />
            <figcaption className="text-xs text-stone-600">Your reactants, drawn by RDKit</figcaption>
          </figure>
        )}
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
                : saved === 'local'
                  ? 'Draft kept in this browser only'
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
      <dialog
        ref={helpRef}
        aria-labelledby="shortcuts-title"
        className="m-auto rounded-lg p-0 shadow-xl backdrop:bg-black/30"
      >
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
