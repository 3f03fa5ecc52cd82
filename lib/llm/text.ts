/** Small text helpers shared by the client, the fake server and the demo model. No I/O. */

/** The parts of a chat message this module reads; compatible with the openai SDK's message params. */
export type MessageLike = { role: string; content?: unknown }

/** The plain text of a message's content: a string, or the concatenated text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    let out = ''
    for (const part of content) {
      if (part && typeof part === 'object' && 'text' in part && typeof part.text === 'string') out += part.text
    }
    return out
  }
  return ''
}

/** All message texts joined by newlines (what a script's `contains` matcher sees). */
export function conversationText(messages: readonly MessageLike[]): string {
  return messages.map((m) => contentText(m.content)).join('\n')
}

/** The text of the last user message, or ''. */
export function lastUserText(messages: readonly MessageLike[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m && m.role === 'user') return contentText(m.content)
  }
  return ''
}

/**
 * A deterministic, provider-independent token estimate: one token per four characters, rounded up.
 * The fake server reports usage with it and the client uses it to pre-charge the token bucket.
 */
export function approxTokens(text: string): number {
  return Math.ceil(text.length / 4)
}

/** 32-bit FNV-1a hash of a string; deterministic across runs and platforms. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}
