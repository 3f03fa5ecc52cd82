import { z } from 'zod'

/**
 * The label form's keyboard (issue 25), pure so it is tested without a browser. Keyboard first: the
 * digits 1–9 pick the focused question's option in order, j/k or ↓/↑ move between questions, Enter
 * sends, `?` shows the keys, `g` shows or hides the guidelines. None of them fires while the focus is
 * in a field (the rationale: typing "2" there is text) or with Ctrl, ⌘ or Alt held (the browser's own).
 */
export type LabelCommand =
  | { kind: 'pick'; option: number }
  | { kind: 'move'; by: 1 | -1 }
  | { kind: 'send' }
  | { kind: 'help' }
  | { kind: 'guidelines' }

export interface KeyLike {
  key: string
  altKey: boolean
  ctrlKey: boolean
  metaKey: boolean
}

/** The command of a key press, or null. `options`: how many options the focused question has. */
export function labelShortcut(e: KeyLike, inField: boolean, options: number): LabelCommand | null {
  if (inField || e.ctrlKey || e.metaKey || e.altKey) return null
  if (/^[1-9]$/.test(e.key)) {
    const n = Number(e.key)
    return n <= options ? { kind: 'pick', option: n - 1 } : null
  }
  switch (e.key) {
    case 'j':
    case 'ArrowDown':
      return { kind: 'move', by: 1 }
    case 'k':
    case 'ArrowUp':
      return { kind: 'move', by: -1 }
    case 'Enter':
      return { kind: 'send' }
    case '?':
      return { kind: 'help' }
    case 'g':
      return { kind: 'guidelines' }
    default:
      return null
  }
}

/** Whether an element takes typing (a single key there is text, never a shortcut). */
export function isField(el: { tagName?: string; isContentEditable?: boolean } | null | undefined): boolean {
  if (!el) return false
  return !!el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName ?? '')
}

/** The focused question after a move, kept within the questions. */
export const moveFocus = (focus: number, by: 1 | -1, count: number) => Math.min(count - 1, Math.max(0, focus + by))

export const LABEL_KEYS: Array<[string, string]> = [
  ['1–9', 'choose the option of the focused question'],
  ['j / ↓', 'next question'],
  ['k / ↑', 'previous question'],
  ['Enter', 'send the label'],
  ['g', 'show or hide the guidelines'],
  ['?', 'this list'],
]

// ───────────────────────────── drafts ─────────────────────────────

const Values = z.record(z.string().max(32), z.string().max(100))

/** What a label's draft keeps (`sessions.save-draft` and this browser's copy); values as the form holds them. */
export const LabelDraft = z.object({
  answers: Values.catch({}),
  rationale: z.string().max(4_000).catch(''),
  turns: z.record(z.string().regex(/^\d{1,6}$/), Values).catch({}),
})
export type LabelDraft = z.output<typeof LabelDraft>

/** A stored draft as the form restores it: the server's (any browser) over this browser's; null if neither reads. */
export function readLabelDraft(server: unknown, local: string | null): LabelDraft | null {
  let raw: unknown = server
  if (raw == null && local) {
    try {
      raw = JSON.parse(local)
    } catch {
      raw = null
    }
  }
  if (!raw || typeof raw !== 'object') return null
  const d = LabelDraft.safeParse({ answers: {}, rationale: '', turns: {}, ...raw })
  return d.success ? d.data : null
}

/** The draft key of message j of a session (the other protocols' forms use the same). */
export const draftKey = (sessionId: string, j: number) => `parley:draft:${sessionId}:${j}`
