import { createHash } from 'node:crypto'
import { clientKey } from '@/lib/server/auth/client-address'
import { settings } from '@/lib/server/config'
import { pgTransaction, sql } from '@/lib/server/db'

/**
 * Limits on guessing a password (sign-in, and the current password of a password change), kept in
 * PostgreSQL (`SignInLimit`) so every app instance shares them. The design keeps brute force slow
 * without letting a stranger lock anyone out (docs/ARCHITECTURE.md "Sign-in limits" has the
 * arithmetic):
 *
 * 1. **Per account and source** (the client address, IPv6 by /64): {@link GuessLimits.freeFailures}
 *    failures are free, then each further try waits 2^(failures − free) seconds after the last
 *    failure (1 s, 2 s, 4 s … at most an hour). A success clears the pair; a pair is forgotten two
 *    days after its last failure. Only the guesser's own address backs off, so a stranger elsewhere
 *    cannot refuse the owner anything.
 * 2. **Per source**: {@link GuessLimits.perMinute} failed attempts a minute from one address over
 *    all accounts (password spraying).
 * 3. **Per account, over all sources**: past {@link GuessLimits.accountPerHour} failures in an hour
 *    the account is *under attack*: no try is free any more (an address that failed on it backs off
 *    from its first failure, up to a day), and every attempt is slowed by {@link UNDER_ATTACK_DELAY_MS}.
 *    An address that has not failed on it is never refused, so the owner still signs in from theirs.
 *
 * Every attempt that is let through is counted *before* the password is looked at (as a failure; a
 * success then takes it back), in one transaction that locks the source, account and pair rows in
 * that order, so attempts racing in parallel cannot slip past a limit. Refused attempts count
 * nowhere: hammering during a wait neither lengthens it nor touches anyone else's counters.
 */
export interface GuessLimits {
  /** Failed attempts a minute from one source over all accounts (PARLEY_SIGNIN_PER_MINUTE, 20). */
  perMinute: number
  /** Failures per account and source before backing off (PARLEY_SIGNIN_FREE_FAILURES, 5). */
  freeFailures: number
  /** Failures per account an hour, all sources, past which it is under attack (PARLEY_SIGNIN_ACCOUNT_PER_HOUR, 100). */
  accountPerHour: number
}

export function guessLimits(env: Record<string, string | undefined> = process.env): GuessLimits {
  const c = settings(['PARLEY_SIGNIN_PER_MINUTE', 'PARLEY_SIGNIN_FREE_FAILURES', 'PARLEY_SIGNIN_ACCOUNT_PER_HOUR'], env)
  return {
    perMinute: c.PARLEY_SIGNIN_PER_MINUTE ?? 20,
    freeFailures: c.PARLEY_SIGNIN_FREE_FAILURES ?? 5,
    accountPerHour: c.PARLEY_SIGNIN_ACCOUNT_PER_HOUR ?? 100,
  }
}

/** The window of the per-source counter. */
export const SOURCE_WINDOW_SECONDS = 60
/** The window of the per-account counter. */
export const ACCOUNT_WINDOW_SECONDS = 3600
/** The longest back-off of an (account, source) pair; while the account is under attack, a day. */
export const BACKOFF_CAP_SECONDS = 3600
export const UNDER_ATTACK_BACKOFF_CAP_SECONDS = 86_400
/** A pair's failures are forgotten this long after its last failure. */
export const PAIR_MEMORY_SECONDS = 2 * 86_400
/** How long an attempt on an account under attack is held before the password is checked. */
export const UNDER_ATTACK_DELAY_MS = 1000

/**
 * How long an (account, source) pair with `failures` failures waits after its last one: nothing for
 * the free ones, then 2^(failures − free) seconds up to the cap (no free ones under attack).
 */
export function backoffSeconds(failures: number, limits: GuessLimits, underAttack: boolean): number {
  const free = underAttack ? 0 : limits.freeFailures
  if (failures < free) return 0
  const cap = underAttack ? UNDER_ATTACK_BACKOFF_CAP_SECONDS : BACKOFF_CAP_SECONDS
  return Math.min(cap, 2 ** (failures - free))
}

export type GuessAllowance =
  | { ok: true; underAttack: boolean }
  | { ok: false; retryAfterSeconds: number; why: 'source' | 'account-source' }

const hash = (s: string) => createHash('sha256').update(s).digest('hex')

/**
 * The counters one attempt goes to. `account` names what is guessed (`email:<address>` for sign-in,
 * `password:<userId>` for a password change); `client` is the address (null: no source counter, and
 * the pair is the account alone).
 */
export function guessKeys(account: string, client: string | null) {
  const source = client === null ? null : clientKey(client)
  return {
    account: hash(account),
    source: source === null ? null : hash(`client:${source}`),
    pair: hash(`pair:${account}|${source ?? ''}`),
  }
}

/** The sign-in counters of an email and client address (the account key is `email:<lower-cased email>`). */
export const signInAccount = (email: string) => `email:${email.trim().toLowerCase()}`

type Counter = { attempts: number; windowStart: Date; age: number }

/**
 * Count one attempt to guess `account`'s password from `client` and say whether it may go ahead
 * (see the module comment). Call {@link guessSucceeded} when the password was right.
 */
export async function consumeGuess(input: { account: string; client: string | null }): Promise<GuessAllowance> {
  const limits = guessLimits()
  const keys = guessKeys(input.account, input.client)
  const result = await pgTransaction(async (c) => {
    // Source first, then account, then pair: every transaction locks in this order.
    let source: Counter | undefined
    if (keys.source) {
      source = (
        await c.query<Counter>(
          `INSERT INTO "SignInLimit" ("key", "windowStart", "attempts") VALUES ($1, now(), 0)
           ON CONFLICT ("key") DO UPDATE SET
             "attempts" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => $2)
                               THEN 0 ELSE "SignInLimit"."attempts" END,
             "windowStart" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => $2)
                                  THEN now() ELSE "SignInLimit"."windowStart" END
           RETURNING "attempts", "windowStart", EXTRACT(EPOCH FROM now() - "windowStart")::float8 AS age`,
          [keys.source, SOURCE_WINDOW_SECONDS],
        )
      ).rows[0]
    }
    const account = (
      await c.query<Counter>(
        `INSERT INTO "SignInLimit" ("key", "windowStart", "attempts") VALUES ($1, now(), 0)
         ON CONFLICT ("key") DO UPDATE SET
           "attempts" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => $2)
                             THEN 0 ELSE "SignInLimit"."attempts" END,
           "windowStart" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => $2)
                                THEN now() ELSE "SignInLimit"."windowStart" END
         RETURNING "attempts", "windowStart", EXTRACT(EPOCH FROM now() - "windowStart")::float8 AS age`,
        [keys.account, ACCOUNT_WINDOW_SECONDS],
      )
    ).rows[0] as Counter
    // A pair's windowStart is the time of its last failure, attempts its failures.
    const pair = (
      await c.query<Counter>(
        `INSERT INTO "SignInLimit" ("key", "windowStart", "attempts") VALUES ($1, now(), 0)
         ON CONFLICT ("key") DO UPDATE SET
           "attempts" = CASE WHEN "SignInLimit"."windowStart" <= now() - make_interval(secs => $2)
                             THEN 0 ELSE "SignInLimit"."attempts" END
         RETURNING "attempts", "windowStart", EXTRACT(EPOCH FROM now() - "windowStart")::float8 AS age`,
        [keys.pair, PAIR_MEMORY_SECONDS],
      )
    ).rows[0] as Counter
    // Refused attempts are not counted: they cost the guesser nothing and the owner nothing.
    if (source && source.attempts >= limits.perMinute)
      return {
        ok: false as const,
        why: 'source' as const,
        retryAfterSeconds: Math.max(1, Math.ceil(SOURCE_WINDOW_SECONDS - source.age)),
      }
    const underAttack = account.attempts >= limits.accountPerHour
    const wait = backoffSeconds(pair.attempts, limits, underAttack)
    if (pair.attempts > 0 && pair.age < wait)
      return {
        ok: false as const,
        why: 'account-source' as const,
        retryAfterSeconds: Math.max(1, Math.ceil(wait - pair.age)),
      }
    await c.query(
      `UPDATE "SignInLimit" SET "attempts" = "attempts" + 1,
         "windowStart" = CASE WHEN "key" = $2 THEN now() ELSE "windowStart" END
       WHERE "key" = ANY($1::text[])`,
      [[keys.source, keys.account, keys.pair].filter((k) => k !== null), keys.pair],
    )
    return { ok: true as const, underAttack }
  })
  if (Math.random() < 0.02) {
    // Old rows are useless; a few callers sweep them up (indexed on windowStart).
    await sql()
      .query(`DELETE FROM "SignInLimit" WHERE "windowStart" < now() - make_interval(secs => $1)`, [PAIR_MEMORY_SECONDS])
      .catch(() => {})
  }
  if (result.ok && result.underAttack) await new Promise((r) => setTimeout(r, UNDER_ATTACK_DELAY_MS))
  return result
}

/**
 * The password was right: the pair's failures are cleared, and the attempt counted in advance is
 * taken back from the account and the source.
 */
export async function guessSucceeded(input: { account: string; client: string | null }): Promise<void> {
  const keys = guessKeys(input.account, input.client)
  await sql().query(
    `WITH gone AS (DELETE FROM "SignInLimit" WHERE "key" = $1)
     UPDATE "SignInLimit" SET "attempts" = GREATEST(0, "attempts" - 1) WHERE "key" = ANY($2::text[])`,
    [keys.pair, [keys.account, keys.source].filter((k): k is string => k !== null)],
  )
}

export function tooManyAttemptsMessage(allowance: { retryAfterSeconds: number; why: string }): string {
  const wait = `${allowance.retryAfterSeconds} second${allowance.retryAfterSeconds === 1 ? '' : 's'}`
  return allowance.why === 'source'
    ? `Too many failed sign-ins from your network. Try again in ${wait}.`
    : `Too many failed sign-ins to this account from your network. Try again in ${wait}, or ask an admin for a reset link.`
}
