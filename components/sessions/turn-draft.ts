/**
 * A turn's draft, kept twice while it is being written: in this browser at once (localStorage) and
 * on the server a moment after the last change (`sessions.save-draft`, any browser). On load the
 * form restores the draft once: the server's copy, else this browser's (the protocol's `read`
 * decides, and checks the shape). Framework-free: the hook (use-turn-draft.ts) wires it into React.
 */

export type DraftStatus = '' | 'restored' | 'pending' | 'saved' | 'local'

export const DRAFT_STATUS_TEXT: Record<DraftStatus, string> = {
  '': '',
  restored: 'Draft restored',
  pending: 'Saving draft…',
  saved: 'Draft saved',
  local: 'Draft kept in this browser only',
}

/** This browser's key of the draft of message `seq` of a session. */
export const draftStorageKey = (sessionId: string, seq: number) => `parley:draft:${sessionId}:${seq}`

/** The part of localStorage a draft uses (a Map stands in for it in tests). */
export interface DraftStore {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
  keys(): string[]
}

/** The browser's localStorage as a DraftStore (reading it may throw: private modes, disabled storage). */
export function browserDraftStore(): DraftStore {
  return {
    getItem: (k) => localStorage.getItem(k),
    setItem: (k, v) => localStorage.setItem(k, v),
    removeItem: (k) => localStorage.removeItem(k),
    keys: () => Object.keys(localStorage),
  }
}

/**
 * The draft to restore on load, or null: this browser's copy is read (and, with `pruneEarlier`, the
 * copies of the session's earlier messages are removed, they were sent); storage that fails counts as
 * empty. `read` picks the server's draft or the local one and checks its shape.
 */
export function restoreDraft<D>(o: {
  store: DraftStore
  sessionId: string
  seq: number
  serverDraft: unknown
  read: (serverDraft: unknown, local: string | null) => D | null
  pruneEarlier?: boolean
}): D | null {
  let local: string | null = null
  try {
    local = o.store.getItem(draftStorageKey(o.sessionId, o.seq))
    if (o.pruneEarlier) {
      const prefix = `parley:draft:${o.sessionId}:`
      for (const k of o.store.keys())
        if (k.startsWith(prefix) && Number(k.slice(prefix.length)) < o.seq) o.store.removeItem(k)
    }
  } catch {}
  return o.read(o.serverDraft, local)
}

/**
 * A change of the draft (its JSON): kept in this browser at once, status `pending`, then sent to the
 * server after `delayMs` unless another change comes first (call the returned cancel then): `saved`,
 * or `local` when the server refused or could not be reached.
 */
export function keepDraft(o: {
  store: DraftStore
  sessionId: string
  seq: number
  json: string
  save: (sessionId: string, seq: number, data: Record<string, unknown>) => Promise<boolean>
  setStatus: (s: DraftStatus) => void
  delayMs?: number
}): () => void {
  try {
    o.store.setItem(draftStorageKey(o.sessionId, o.seq), o.json)
  } catch {}
  o.setStatus('pending')
  const timer = setTimeout(() => {
    o.save(o.sessionId, o.seq, JSON.parse(o.json) as Record<string, unknown>)
      .then((ok) => o.setStatus(ok ? 'saved' : 'local'))
      .catch(() => o.setStatus('local'))
  }, o.delayMs ?? 600)
  return () => clearTimeout(timer)
}
