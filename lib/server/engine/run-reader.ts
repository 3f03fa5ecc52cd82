import { db } from '@/lib/server/db'

/**
 * Reading a run's sessions for its results and exports, replayed once per version. A protocol's run
 * page, dashboard and exports derive something from each session's log (a debate's result, an
 * episode's scores); deriving replays the log, which costs far more than reading it, and a run page
 * re-reads itself on every live event. A replay cache keeps each derived value (per process, bounded)
 * under the session's id and `updatedAt`, which every append moves, so only the sessions that changed
 * since are read and replayed again.
 */

/** A session as the cache reads it to derive from: its row, its people and its messages in order. */
export interface StoredSession {
  id: string
  runId: string | null
  repetition: number
  position: number
  status: string
  stopReason: string | null
  stallError: string | null
  createdAt: Date
  updatedAt: Date
  config: unknown
  instance: unknown
  seats: unknown
  people: Array<{ seat: string; userId: string | null; user: { name: string; email: string } | null }>
  messages: Array<{ seq: number; body: unknown; createdAt: Date }>
}

export interface ReplayCache<R> {
  /**
   * The derived value of each of `sessions` (in their order), read and derived again only where the
   * session changed since. A session deleted between the caller's read and this one is left out.
   */
  of(sessions: ReadonlyArray<{ id: string; updatedAt: Date }>): Promise<R[]>
  /** How many values it holds (for tests and metrics). */
  readonly size: number
}

/**
 * A replay cache of `derive` (pure: the session's log to the value), holding at most `max` values
 * (the oldest entry goes first) and reading `batch` sessions per statement.
 */
export function replayCache<R>(
  derive: (session: StoredSession) => R,
  opts: { max?: number; batch?: number } = {},
): ReplayCache<R> {
  const max = opts.max ?? 20_000
  const batch = opts.batch ?? 300
  const cache = new Map<string, { at: number; value: R }>()
  return {
    get size() {
      return cache.size
    },
    async of(sessions) {
      const stale = sessions.filter((s) => cache.get(s.id)?.at !== s.updatedAt.getTime())
      // This call's own values, so a call over more sessions than the bound still answers for each.
      const fresh = new Map<string, R>()
      for (let i = 0; i < stale.length; i += batch) {
        const rows = await db.protocolSession.findMany({
          where: { id: { in: stale.slice(i, i + batch).map((s) => s.id) } },
          select: {
            id: true,
            runId: true,
            repetition: true,
            position: true,
            status: true,
            stopReason: true,
            stallError: true,
            createdAt: true,
            updatedAt: true,
            config: true,
            instance: true,
            seats: true,
            people: { select: { seat: true, userId: true, user: { select: { name: true, email: true } } } },
            messages: { orderBy: { seq: 'asc' }, select: { seq: true, body: true, createdAt: true } },
          },
        })
        for (const row of rows) {
          const value = derive(row)
          fresh.set(row.id, value)
          cache.delete(row.id) // re-inserted last: the oldest entries go first
          if (cache.size >= max) cache.delete(cache.keys().next().value as string)
          cache.set(row.id, { at: row.updatedAt.getTime(), value })
        }
      }
      // A session changed between the two reads is shown as derived (its newer version).
      return sessions.flatMap((s) => {
        if (fresh.has(s.id)) return [fresh.get(s.id) as R]
        const hit = cache.get(s.id)
        return hit ? [hit.value] : []
      })
    },
  }
}
