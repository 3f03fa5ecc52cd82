/**
 * Chat prompts as data (no React): the turns of a context or request, what else it holds, and which
 * turns of a prompt are new since an earlier one. Used on the server (the inspector computes what is
 * new) and in the browser (the prompt views).
 */
export type ChatTurn = { role?: string; content?: string | unknown[] | null }

/** The chat turns of a context or a request (`[...]` or `{messages: [...]}`), or null. */
export function turnsOf(value: unknown): ChatTurn[] | null {
  if (Array.isArray(value) && value.every((m) => m && typeof m === 'object' && 'role' in m)) return value as ChatTurn[]
  if (value && typeof value === 'object' && Array.isArray((value as { messages?: unknown }).messages))
    return (value as { messages: ChatTurn[] }).messages
  return null
}

/** What is left of a context or request besides its turns (warnings, parameters …). */
export function restOf(value: unknown): Record<string, unknown> | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null
  const { messages: _m, ...rest } = value as Record<string, unknown>
  return Object.keys(rest).length ? rest : null
}

/**
 * The indexes of the turns of `turns` that `previous` does not have (each earlier turn matches once):
 * with carry-over a prompt repeats every turn before it, and only these are new.
 */
export function freshTurns(turns: readonly ChatTurn[], previous: readonly ChatTurn[]): number[] {
  const seen = new Map<string, number>()
  for (const t of previous) {
    const key = JSON.stringify(t)
    seen.set(key, (seen.get(key) ?? 0) + 1)
  }
  const fresh: number[] = []
  turns.forEach((t, i) => {
    const key = JSON.stringify(t)
    const n = seen.get(key) ?? 0
    if (n > 0) seen.set(key, n - 1)
    else fresh.push(i)
  })
  return fresh
}
