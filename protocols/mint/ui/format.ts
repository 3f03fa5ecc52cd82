/**
 * A MINT reply split into what the pages colour apart: the thought, the code, the proposal and any
 * other text, in the order written. Pure (tested without a browser); the pages render every part as
 * text (React escapes it), never as HTML.
 */
export type ReplyPart = { kind: 'thought' | 'code' | 'proposal' | 'text'; text: string }

const TAGS = { thought: 'thought', execute: 'code', solution: 'proposal' } as const

export function replyParts(reply: string): ReplyPart[] {
  const parts: ReplyPart[] = []
  const re = /<(thought|execute|solution)>([\s\S]*?)<\/\1>/g
  let at = 0
  for (const m of reply.matchAll(re)) {
    const before = reply.slice(at, m.index).trim()
    if (before) parts.push({ kind: 'text', text: before })
    parts.push({ kind: TAGS[m[1] as keyof typeof TAGS], text: (m[2] ?? '').trim() })
    at = (m.index ?? 0) + m[0].length
  }
  const rest = reply.slice(at).trim()
  if (rest) parts.push({ kind: 'text', text: rest })
  return parts
}

/** The colour classes of each part and of the tool's output and the feedback (one palette for every page). */
export const PART_CLASS = {
  thought: 'border-l-4 border-sky-300 bg-sky-50 text-stone-800',
  code: 'border-l-4 border-violet-400 bg-violet-50 font-mono text-xs text-stone-900',
  proposal: 'border-l-4 border-emerald-500 bg-emerald-50 font-medium text-stone-900',
  text: 'border-l-4 border-stone-200 bg-white text-stone-700',
  output: 'border-l-4 border-stone-400 bg-stone-100 font-mono text-xs text-stone-800',
  feedback: 'border-l-4 border-amber-400 bg-amber-50 text-stone-900',
} as const

export const PART_LABEL = {
  thought: 'Thought',
  code: 'Code',
  proposal: 'Proposed solution',
  text: 'Text',
  output: 'Output',
  feedback: 'Expert feedback',
} as const

/** A key press as the feedback form reads it. */
export interface KeyLike {
  key: string
  ctrlKey: boolean
  metaKey: boolean
  altKey: boolean
}

export type FeedbackCommand = { kind: 'send' } | { kind: 'verdict'; value: 'GOOD' | 'BAD' }

/**
 * The keyboard of the turn forms: Ctrl/Cmd+Enter sends (anywhere, also while typing); in binary mode
 * g and b choose GOOD and BAD, but only outside a text field (typing "g" in a field types a g).
 */
export function commandFor(e: KeyLike, opts: { binary: boolean; inField: boolean }): FeedbackCommand | null {
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') return { kind: 'send' }
  if (!opts.binary || opts.inField || e.ctrlKey || e.metaKey || e.altKey) return null
  const k = e.key.toLowerCase()
  if (k === 'g') return { kind: 'verdict', value: 'GOOD' }
  if (k === 'b') return { kind: 'verdict', value: 'BAD' }
  return null
}

/** The focus is in a field that takes text. */
export function isField(el: Element | null): boolean {
  if (!el) return false
  const tag = el.tagName.toLowerCase()
  return tag === 'input' || tag === 'textarea' || tag === 'select' || (el as HTMLElement).isContentEditable === true
}

/** The browser key of a turn's draft. */
export const draftKey = (sessionId: string, j: number) => `parley:draft:${sessionId}:${j}`
