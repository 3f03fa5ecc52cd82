import { createHash } from 'node:crypto'
import type { Actor } from '@/lib/server/actor'
import { sql } from '@/lib/server/db'
import { AppError } from '@/lib/server/errors'

/**
 * Per-person limits on operations a person may call many times a minute and that cost the server
 * work off the request (`pxp.check-answer` runs RDKit while an expert types; `task-templates.try-match`
 * runs a regex): the mechanism of the sign-in limits (lib/server/auth/sign-in-limit.ts), a fixed
 * window per key counted in PostgreSQL with one atomic upsert, so every instance shares the counters
 * and racing calls cannot slip past. A key is the SHA-256 of the operation and the user (an API key
 * counts as its owner).
 */

/** The window every operation limit counts in. */
export const RATE_WINDOW_SECONDS = 60

/**
 * Counts one call of `operation` by `actor` and refuses it with 429 (and how long to wait) past
 * `perMinute` calls in the actor's current window.
 */
export async function enforceRate(actor: Actor, operation: string, perMinute: number): Promise<void> {
  const key = createHash('sha256').update(`${operation}:${actor.userId}`).digest('hex')
  const { rows } = await sql().query<{ hits: number; retryAfter: number }>(
    `INSERT INTO "RateLimit" ("key", "windowStart", "hits") VALUES ($1, now(), 1)
     ON CONFLICT ("key") DO UPDATE SET
       "hits" = CASE WHEN "RateLimit"."windowStart" <= now() - make_interval(secs => $2::float8)
                     THEN 1 ELSE "RateLimit"."hits" + 1 END,
       "windowStart" = CASE WHEN "RateLimit"."windowStart" <= now() - make_interval(secs => $2::float8)
                            THEN now() ELSE "RateLimit"."windowStart" END
     RETURNING "hits", EXTRACT(EPOCH FROM ("windowStart" + make_interval(secs => $2::float8) - now()))::float8 AS "retryAfter"`,
    [key, RATE_WINDOW_SECONDS],
  )
  if (Math.random() < 0.01) {
    // Old windows are useless; a few callers sweep them up (indexed on windowStart).
    await sql()
      .query(`DELETE FROM "RateLimit" WHERE "windowStart" < now() - interval '1 hour'`)
      .catch(() => {})
  }
  const row = rows[0]
  if (!row || row.hits <= perMinute) return
  const wait = Math.max(1, Math.ceil(row.retryAfter))
  throw new AppError(
    429,
    `Too many requests: at most ${perMinute} a minute. Try again in ${wait} second${wait === 1 ? '' : 's'}.`,
  )
}
