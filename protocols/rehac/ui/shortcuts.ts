import { z } from 'zod'
import { ACTION_TYPES, type ActionType } from '@/protocols/rehac/core/protocol'

/**
 * The annotator's keyboard (issue 24), pure so it is tested without a browser. Modifier shortcuts work
 * anywhere, also while typing (they type nothing); single keys only when the focus is not in a field, so
 * typing "a" in the Thought never chooses the agent. Alt+letter is read from the physical key (`code`):
 * on a Mac, Alt+S types "ß" into `key`.
 */
export type Command =
  | { kind: 'send' }
  | { kind: 'preview' }
  | { kind: 'suggest' }
  | { kind: 'use' }
  | { kind: 'action'; type: ActionType }
  | { kind: 'solver'; solver: 'agent' | 'human' }

export interface KeyLike {
  key: string
  code?: string
  altKey: boolean
  ctrlKey: boolean
  metaKey: boolean
  shiftKey?: boolean
}

const ALT_STEP: Record<string, Command> = {
  KeyR: { kind: 'preview' },
  KeyG: { kind: 'suggest' },
  KeyU: { kind: 'use' },
}
/** Alt+letter → action, per task kind (QA: Search, Lookup, Finish; SQL: a query, or end with submit). */
const ALT_ACTION: Record<'qa' | 'sql', Record<string, ActionType>> = {
  qa: { KeyS: 'search', KeyL: 'lookup', KeyF: 'finish' },
  sql: { KeyQ: 'sql', KeyE: 'submit' },
}

/**
 * The command a key press asks for on the step form (`form: 'step'`, of a QA or SQL task) or the decide
 * form, or null. `inField`: the focus is in an input, textarea, select or editable element.
 */
export function shortcutFor(
  e: KeyLike,
  inField: boolean,
  form: { kind: 'step'; task: 'qa' | 'sql' } | { kind: 'decide' },
): Command | null {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.altKey) return { kind: 'send' }
  if (e.altKey && !e.ctrlKey && !e.metaKey) {
    if (form.kind !== 'step' || !e.code) return null
    const type = ALT_ACTION[form.task][e.code]
    return type ? { kind: 'action', type } : (ALT_STEP[e.code] ?? null)
  }
  if (e.ctrlKey || e.metaKey || e.altKey || inField) return null
  if (form.kind === 'decide') {
    const k = e.key.toLowerCase()
    if (k === 'a') return { kind: 'solver', solver: 'agent' }
    if (k === 'h') return { kind: 'solver', solver: 'human' }
  }
  return null
}

/** Whether an element takes typing (a single key there is text, never a shortcut). */
export function isField(el: { tagName?: string; isContentEditable?: boolean } | null | undefined): boolean {
  if (!el) return false
  return !!el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName ?? '')
}

/** The help line's entries: [keys, what], as the form shows them. */
export function shortcutHelp(form: { kind: 'step'; task: 'qa' | 'sql' } | { kind: 'decide' }): Array<[string, string]> {
  if (form.kind === 'decide')
    return [
      ['A', 'the agent'],
      ['H', 'the human'],
      ['Ctrl+Enter', 'Decide'],
    ]
  const actions: Array<[string, string]> =
    form.task === 'qa'
      ? [
          ['Alt+S', 'Search'],
          ['Alt+L', 'Lookup'],
          ['Alt+F', 'Finish'],
        ]
      : [
          ['Alt+Q', 'SQL statement'],
          ['Alt+E', 'submit'],
        ]
  return [
    ...actions,
    ['Alt+R', 'Run'],
    ['Alt+G', 'Show a suggestion'],
    ['Alt+U', 'Use it'],
    ['Ctrl+Enter', 'Send step'],
  ]
}

// ───────────────────────────── drafts ─────────────────────────────

/** What a step's draft keeps (`sessions.save-draft` and this browser's copy). */
export const StepDraft = z.object({
  thought: z.string().max(4_000).catch(''),
  type: z.enum(ACTION_TYPES).nullable().catch(null),
  arg: z.string().max(4_000).catch(''),
  suggestion: z.enum(['opened', 'copied']).nullable().catch(null),
})
export type StepDraft = z.output<typeof StepDraft>

/** A stored draft as the form restores it: the server's (any browser) over this browser's; null if neither reads. */
export function readDraft(server: unknown, local: string | null): StepDraft | null {
  let raw: unknown = server
  if (raw == null && local) {
    try {
      raw = JSON.parse(local)
    } catch {
      raw = null
    }
  }
  if (!raw || typeof raw !== 'object') return null
  const d = StepDraft.safeParse({ thought: '', type: null, arg: '', suggestion: null, ...raw })
  return d.success ? d.data : null
}

/** The draft key of message j of a session (the other protocols' forms use the same). */
export const draftKey = (sessionId: string, j: number) => `parley:draft:${sessionId}:${j}`
