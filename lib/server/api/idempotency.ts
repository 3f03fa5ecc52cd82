import { createHash } from 'node:crypto'
import { sql } from '@/lib/server/db'

/**
 * Idempotency-Key for REST creates (draft-ietf-httpapi-idempotency-key-header): a client that does
 * not know whether its POST arrived sends it again with the same key and gets the first answer
 * instead of a second run, study or dataset.
 *
 * Per account and key, one row in "IdempotencyKey" (primary key userId + key). The first request
 * inserts it (`ON CONFLICT DO NOTHING`: of two racing requests exactly one gets the row), runs the
 * operation, and stores its answer when it succeeded; a failed one deletes the row again, so the
 * request can be corrected and sent with the same key (nothing was created). A later request with
 * the key gets, by the request's fingerprint (method, path, body): the stored answer when it is the
 * same request; 422 when it is another; 409 while the first is still running. Keys are kept
 * IDEMPOTENCY_HOURS; expired rows are deleted as new keys come in.
 */
export const IDEMPOTENCY_HOURS = 24

/** The key of a request: null when it sends none; an error for a malformed one. */
export function idempotencyKeyOf(req: Request): { key: string | null } | { error: string } {
  const raw = req.headers.get('idempotency-key')
  if (raw === null) return { key: null }
  let key = raw.trim()
  // The draft's form is a Structured Field string ("…"); a bare token is what most clients send.
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(key)
  if (quoted) key = (quoted[1] ?? '').replace(/\\(["\\])/g, '$1')
  if (!/^[\x20-\x7e]{1,255}$/.test(key) || !key.trim())
    return { error: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters (e.g. a UUID).' }
  return { key }
}

/** A stable serialisation of a request's input: keys sorted, files by name, type, size and SHA-256. */
async function canonical(value: unknown): Promise<unknown> {
  if (value instanceof Blob) {
    const hash = createHash('sha256')
    for await (const chunk of value.stream() as unknown as AsyncIterable<Uint8Array>) hash.update(chunk)
    return {
      file: value instanceof File ? value.name : null,
      type: value.type,
      size: value.size,
      sha256: hash.digest('hex'),
    }
  }
  if (Array.isArray(value)) return Promise.all(value.map(canonical))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) out[k] = await canonical((value as Record<string, unknown>)[k])
    return out
  }
  return value
}

/** What identifies a request for its key: its method, path and input. */
export async function fingerprintOf(method: string, path: string, input: unknown): Promise<string> {
  const text = JSON.stringify([method.toUpperCase(), path, await canonical(input)])
  return createHash('sha256').update(text).digest('hex')
}

export type Claim =
  | { kind: 'first'; finish(status: number, body: unknown): Promise<void> }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'other-request' }
  | { kind: 'in-progress'; since: Date }

/** Takes the key for this request, or says what an earlier request with it left. */
export async function claimIdempotencyKey(userId: string, key: string, fingerprint: string): Promise<Claim> {
  const pool = sql()
  for (let attempt = 0; ; attempt++) {
    // Expired keys go first: this one, and a few of anyone's.
    await pool.query(
      `DELETE FROM "IdempotencyKey"
       WHERE ("userId" = $1 AND key = $2 AND "createdAt" < now() - make_interval(hours => $3))
          OR ctid = ANY (ARRAY(SELECT ctid FROM "IdempotencyKey"
                               WHERE "createdAt" < now() - make_interval(hours => $3) LIMIT 100))`,
      [userId, key, IDEMPOTENCY_HOURS],
    )
    const inserted = await pool.query(
      `INSERT INTO "IdempotencyKey" ("userId", key, fingerprint) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [userId, key, fingerprint],
    )
    if (inserted.rowCount === 1) {
      return {
        kind: 'first',
        async finish(status, body) {
          if (status >= 200 && status < 300)
            await pool.query(
              `UPDATE "IdempotencyKey" SET status = $3, body = $4::jsonb WHERE "userId" = $1 AND key = $2`,
              [userId, key, status, JSON.stringify(body)],
            )
          // An error created nothing: the key is free again for the corrected request.
          else await pool.query(`DELETE FROM "IdempotencyKey" WHERE "userId" = $1 AND key = $2`, [userId, key])
        },
      }
    }
    const { rows } = await pool.query<{
      fingerprint: string
      status: number | null
      body: unknown
      createdAt: Date
    }>(`SELECT fingerprint, status, body, "createdAt" FROM "IdempotencyKey" WHERE "userId" = $1 AND key = $2`, [
      userId,
      key,
    ])
    const row = rows[0]
    // The first request failed and let the key go between our insert and this read: try again.
    if (!row) {
      if (attempt < 3) continue
      return { kind: 'in-progress', since: new Date() }
    }
    if (row.fingerprint !== fingerprint) return { kind: 'other-request' }
    if (row.status === null) return { kind: 'in-progress', since: row.createdAt }
    return { kind: 'replay', status: row.status, body: row.body }
  }
}
