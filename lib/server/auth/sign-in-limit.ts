import { createHash } from 'node:crypto'
import { clientKey } from '@/lib/server/auth/client-address'
import { db } from '@/lib/server/db'

/** The window every sign-in limit counts in. */
export const SIGN_IN_WINDOW_SECONDS = 60

/** `PARLEY_SIGNIN_PER_MINUTE` (default 20), read on every attempt. */
export function signInLimit(raw = process.env.PARLEY_SIGNIN_PER_MINUTE): number {
  const n = Number(raw ?? 20)
  return Number.isInteger(n) && n > 0 ? n : 20
}

export type SignInAllowance = { ok: true } | { ok: false; retryAfterSeconds: number }

const keyOf = (kind: 'email' | 'client', value: string) => createHash('sha256').update(`${kind}:${value}`).digest('hex')

/** The two counters one attempt goes to: the account (email) and the client (address; IPv6 by /64). */
export function signInKeys(email: string, client: string): { email: string; client: string } {
  return { email: keyOf('email', email.trim().toLowerCase()), client: keyOf('client', clientKey(client)) }
}

/**
 * Counts one sign-in attempt against the account and against the client, in PostgreSQL so that every
 * app instance shares the counters, and says whether it may go ahead. Each key has a fixed window of
 * {@link SIGN_IN_WINDOW_SECONDS} from its first attempt; past `PARLEY_SIGNIN_PER_MINUTE` attempts in
 * either counter every attempt is refused, whatever the password, until that window ends. Every
 * attempt counts (right or wrong), so the check comes before the password is even looked at.
 * One statement per attempt: the upsert is atomic, so parallel attempts cannot slip past the limit.
 */
export async function consumeSignInAttempt(input: { email: string; client: string }): Promise<SignInAllowance> {
  const keys = signInKeys(input.email, input.client)
  const max = signInLimit()
  const window = SIGN_IN_WINDOW_SECONDS
  // The email key comes first in every statement, so two attempts never lock the same rows in
  // opposite orders.
  const rows = await db.$queryRaw<Array<{ attempts: number; retryAfter: number }>>`
    INSERT INTO "SignInLimit" ("key", "windowStart", "attempts")
    SELECT k, now(), 1 FROM unnest(${[keys.email, keys.client]}::text[]) WITH ORDINALITY AS t(k, o) ORDER BY o
    ON CONFLICT ("key") DO UPDATE SET
      "attempts" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => ${window}::float8)
                        THEN 1 ELSE "SignInLimit"."attempts" + 1 END,
      "windowStart" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => ${window}::float8)
                           THEN now() ELSE "SignInLimit"."windowStart" END
    RETURNING "attempts",
      EXTRACT(EPOCH FROM ("windowStart" + make_interval(secs => ${window}::float8) - now()))::float8 AS "retryAfter"`
  if (Math.random() < 0.02) {
    // Old windows are useless; a few callers sweep them up (indexed on windowStart).
    await db.$executeRaw`DELETE FROM "SignInLimit" WHERE "windowStart" < now() - interval '1 hour'`.catch(() => {})
  }
  const over = rows.filter((r) => r.attempts > max)
  if (!over.length) return { ok: true }
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...over.map((r) => r.retryAfter)))) }
}

export function tooManyAttemptsMessage(retryAfterSeconds: number): string {
  return (
    `Too many sign-in attempts for this account or from your address. Sign-in is paused for ` +
    `${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}; until then even the right password is refused.`
  )
}
