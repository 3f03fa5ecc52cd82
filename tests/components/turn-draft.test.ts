import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  DRAFT_STATUS_TEXT,
  type DraftStatus,
  type DraftStore,
  draftStorageKey,
  keepDraft,
  restoreDraft,
} from '@/components/sessions/turn-draft'

/** A Map as this browser's storage; `broken` makes every call throw (private modes, disabled storage). */
function memoryStore(init: Record<string, string> = {}, broken = false): DraftStore & { map: Map<string, string> } {
  const map = new Map(Object.entries(init))
  const guard = () => {
    if (broken) throw new Error('storage is disabled')
  }
  return {
    map,
    getItem(k) {
      guard()
      return map.get(k) ?? null
    },
    setItem(k, v) {
      guard()
      map.set(k, v)
    },
    removeItem(k) {
      guard()
      map.delete(k)
    },
    keys() {
      guard()
      return [...map.keys()]
    },
  }
}

/** A protocol's reader: the server's draft first, else this browser's JSON, when it has a `text`. */
const read = (server: unknown, local: string | null): { text: string } | null => {
  const raw = server ?? (local ? JSON.parse(local) : null)
  return raw && typeof raw === 'object' && typeof (raw as { text?: unknown }).text === 'string'
    ? { text: (raw as { text: string }).text }
    : null
}

afterEach(() => {
  vi.useRealTimers()
})

describe('a turn draft, kept in the browser and on the server', () => {
  it('restores the server’s draft over this browser’s, else this browser’s, else nothing', () => {
    const store = memoryStore({ [draftStorageKey('s1', 3)]: JSON.stringify({ text: 'local' }) })
    const o = { store, sessionId: 's1', seq: 3, read }
    expect(restoreDraft({ ...o, serverDraft: { text: 'server' } })).toEqual({ text: 'server' })
    expect(restoreDraft({ ...o, serverDraft: null })).toEqual({ text: 'local' })
    expect(restoreDraft({ ...o, seq: 4, serverDraft: null })).toBeNull()
    // Storage that throws counts as empty; the server's draft still restores.
    const broken = memoryStore({}, true)
    expect(restoreDraft({ ...o, store: broken, serverDraft: null })).toBeNull()
    expect(restoreDraft({ ...o, store: broken, serverDraft: { text: 'server' } })).toEqual({ text: 'server' })
  })

  it('with pruneEarlier, drops this browser’s drafts of the session’s earlier messages only', () => {
    const store = memoryStore({
      [draftStorageKey('s1', 1)]: '{}',
      [draftStorageKey('s1', 2)]: '{}',
      [draftStorageKey('s1', 3)]: JSON.stringify({ text: 'now' }),
      [draftStorageKey('s1', 4)]: '{}',
      [draftStorageKey('s2', 1)]: '{}',
      other: 'x',
    })
    const kept = () => [...store.map.keys()].sort()
    expect(restoreDraft({ store, sessionId: 's1', seq: 3, serverDraft: null, read })).toEqual({ text: 'now' })
    expect(kept()).toHaveLength(6) // without the option nothing is removed
    restoreDraft({ store, sessionId: 's1', seq: 3, serverDraft: null, read, pruneEarlier: true })
    expect(kept()).toEqual(
      [draftStorageKey('s1', 3), draftStorageKey('s1', 4), draftStorageKey('s2', 1), 'other'].sort(),
    )
  })

  it('a change is kept locally at once, sent after the delay unless another change comes; the status says how it went', async () => {
    vi.useFakeTimers()
    const store = memoryStore()
    const statuses: DraftStatus[] = []
    const sent: Array<[string, number, unknown]> = []
    let answer: boolean | Error = true
    const save = async (sessionId: string, seq: number, data: Record<string, unknown>) => {
      sent.push([sessionId, seq, data])
      if (answer instanceof Error) throw answer
      return answer
    }
    const o = { store, sessionId: 's1', seq: 2, save, setStatus: (s: DraftStatus) => statuses.push(s) }
    const cancel = keepDraft({ ...o, json: JSON.stringify({ text: 'a' }) })
    expect(store.map.get(draftStorageKey('s1', 2))).toBe('{"text":"a"}')
    expect(statuses).toEqual(['pending'])
    // A second change before the delay: the first is never sent.
    await vi.advanceTimersByTimeAsync(300)
    cancel()
    keepDraft({ ...o, json: JSON.stringify({ text: 'ab' }) })
    await vi.advanceTimersByTimeAsync(599)
    expect(sent).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(sent).toEqual([['s1', 2, { text: 'ab' }]])
    expect(statuses).toEqual(['pending', 'pending', 'saved'])
    // Refused, or the server away: kept in this browser only.
    answer = false
    keepDraft({ ...o, json: '{"text":"abc"}' })
    await vi.advanceTimersByTimeAsync(600)
    answer = new Error('unreachable')
    keepDraft({ ...o, json: '{"text":"abcd"}' })
    await vi.advanceTimersByTimeAsync(600)
    expect(statuses.slice(-4)).toEqual(['pending', 'local', 'pending', 'local'])
    expect(store.map.get(draftStorageKey('s1', 2))).toBe('{"text":"abcd"}')
    // Storage that throws does not stop the server copy.
    const broken = memoryStore({}, true)
    answer = true
    keepDraft({ ...o, store: broken, json: '{"text":"x"}' })
    await vi.advanceTimersByTimeAsync(600)
    expect(statuses.at(-1)).toBe('saved')
    expect(DRAFT_STATUS_TEXT.local).toBe('Draft kept in this browser only')
  })
})
