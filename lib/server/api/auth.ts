import type { Actor } from '@/lib/server/actor'
import { readSession } from '@/lib/server/auth/session-cookie'
import { actorFromUser } from '@/lib/server/auth/session-user'
import { db } from '@/lib/server/db'
import { API_KEY_PATTERN, hashApiKey } from '@/lib/server/services/api-keys'
import { crossCopy } from '@/lib/cross-copy'

export class ApiAuthError extends Error {}
crossCopy(ApiAuthError, 'ApiAuthError')

/**
 * REST callers authenticate with `Authorization: Bearer pk_…` (an API key acting with its owner's
 * current role) or, from the browser, with the session cookie. Returns null when neither is present;
 * throws ApiAuthError for a key that is malformed, unknown, revoked or expired.
 */
export async function apiActor(req: Request): Promise<Actor | null> {
  const header = req.headers.get('authorization')
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header)
    const key = match?.[1] ?? ''
    if (!API_KEY_PATTERN.test(key)) throw new ApiAuthError('Malformed API key. Expected "Authorization: Bearer pk_…".')
    const row = await db.apiKey.findUnique({ where: { hash: hashApiKey(key) }, include: { user: true } })
    if (!row || row.revokedAt || (row.expiresAt && row.expiresAt < new Date())) {
      throw new ApiAuthError('This API key is not valid (unknown, revoked or expired).')
    }
    const actor = actorFromUser(row.user, `api-key:${row.prefix}`)
    if (!actor) throw new ApiAuthError('The account that owns this API key is disabled.')
    // Coarse last-used stamp; never blocks the request.
    if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
      db.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => {})
    }
    return actor
  }
  return sessionActor(req.headers)
}

/** The person signed in through the session cookie in these headers, or null. */
export async function sessionActor(headers: Headers): Promise<Actor | null> {
  const session = await readSession(headers)
  return session ? actorFromUser(session.user, 'session') : null
}
