import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { GlobalLimiter, GlobalPermit } from '@/lib/llm/limiter'
import { sql } from '@/lib/server/db'
import { log } from '@/lib/server/log'

/**
 * An LLM connection's limits across every process and machine, in PostgreSQL: a concurrency lease
 * per call in flight (`LlmLease`, expiring `timeoutMs` + 30 s after it was taken, so a dead
 * process's leases lapse) and request and token buckets plus a pause (`LlmLimitState`), all decided
 * by `parley_llm_acquire()` in one short statement (migration `llm_global_limits`). No database
 * connection is held during the call: a lease is a row, not a lock. A 429 sets the pause, which every
 * process's next admission sees. The token bucket is charged with the estimate and corrected after
 * the call with the real usage, like the local limiter in front of it (lib/llm/limiter.ts).
 *
 * Waiting: for the buckets or a pause, the time the function names; for a slot, until a lease of
 * this process is released (at once) or 25–50 ms (another process's). If the database fails the
 * limiter lets the call through (logged): limits are protection, not a reason to stop the study.
 */
const wake = new EventEmitter()
wake.setMaxListeners(0)

export interface GlobalLimits {
  maxConcurrency: number
  requestsPerMinute?: number | null
  tokensPerMinute?: number | null
  burstSeconds?: number
  timeoutMs: number
}

function sleep(ms: number, signal: AbortSignal | undefined, connectionId: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const done = () => {
      clearTimeout(t)
      wake.off(connectionId, done)
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }
    const onAbort = () => {
      clearTimeout(t)
      wake.off(connectionId, done)
      reject(signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'))
    }
    const t = setTimeout(done, ms)
    wake.once(connectionId, done)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export function globalLimiter(connectionId: string, limits: () => GlobalLimits): GlobalLimiter {
  return {
    async acquire(estimatedTokens: number, signal?: AbortSignal): Promise<GlobalPermit> {
      const started = performance.now()
      const lease = randomUUID()
      for (;;) {
        const l = limits()
        let wait: number
        try {
          const { rows } = await sql().query<{ wait: number }>(
            // Leases and buckets are short-lived: their commit need not wait for the disk (a crash
            // loses at most the last few, which lapse anyway), so every call pays no fsync for them.
            `SELECT set_config('synchronous_commit', 'off', true), parley_llm_acquire($1, $2, $3, $4, $5, $6, $7, $8) AS wait`,
            [
              connectionId,
              l.maxConcurrency,
              l.requestsPerMinute ?? 0,
              l.tokensPerMinute ?? 0,
              l.burstSeconds ?? 1,
              Math.max(0, estimatedTokens),
              lease,
              l.timeoutMs + 30_000,
            ],
          )
          wait = Number(rows[0]?.wait ?? 0)
        } catch (err) {
          log().warn({ err, connectionId }, 'global LLM limits unavailable; calling without them')
          return { waitedMs: performance.now() - started, release: async () => {} }
        }
        if (wait === 0) {
          let released = false
          return {
            waitedMs: performance.now() - started,
            async release(tokenDelta = 0) {
              if (released) return
              released = true
              try {
                await sql().query(
                  `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
                        gone AS (DELETE FROM "LlmLease" WHERE id = $1)
                   UPDATE "LlmLimitState" SET tokens = tokens - $3
                   WHERE "connectionId" = $2 AND $3::float8 <> 0 AND (SELECT true FROM relaxed)`,
                  [lease, connectionId, tokenDelta],
                )
              } catch (err) {
                log().warn({ err, connectionId }, 'releasing a global LLM lease failed; it expires by itself')
              }
              wake.emit(connectionId)
            },
          }
        }
        // -1: no slot free; wait for one of ours to be released, or poll for another process's.
        await sleep(wait < 0 ? 25 + Math.random() * 25 : Math.min(wait, 5000), signal, connectionId)
      }
    },
    async pause(ms: number): Promise<void> {
      if (!(ms > 0)) return
      try {
        await sql().query(
          `UPDATE "LlmLimitState" SET "pausedUntil" = greatest("pausedUntil", clock_timestamp() + $2 * interval '1 millisecond')
           WHERE "connectionId" = $1`,
          [connectionId, ms],
        )
      } catch (err) {
        log().warn({ err, connectionId }, 'pausing the connection for every process failed')
      }
    },
  }
}
