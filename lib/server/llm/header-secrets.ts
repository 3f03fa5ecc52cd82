import type { Prisma } from '@/lib/generated/prisma/client'
import { seal, unseal } from '@/lib/server/crypto'
import { db, sql } from '@/lib/server/db'

/**
 * A connection's extra headers (e.g. `X-Api-Key`) are secrets like its API key: sealed with
 * AES-256-GCM in `extraHeadersEnc`, while `extraHeaders` keeps only the names with masked values
 * for display. Pages, the API and the audit log never see a value.
 */
export type HeaderMap = Record<string, string>

/** Values this long are treated as secrets in model output too (redacted from the call log and streams). */
export const SECRET_HEADER_MIN_LENGTH = 16

/** "…abcd" for a value long enough that four characters say little about it; "…" otherwise. */
export function maskHeaderValue(value: string): string {
  return value.length >= 8 ? `…${value.slice(-4)}` : '…'
}

export function maskHeaders(headers: HeaderMap): HeaderMap {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskHeaderValue(v)]))
}

/** The two columns that store a set of extra headers. */
export function headerColumns(headers: HeaderMap): { extraHeaders: HeaderMap; extraHeadersEnc: string | null } {
  if (Object.keys(headers).length === 0) return { extraHeaders: {}, extraHeadersEnc: null }
  return { extraHeaders: maskHeaders(headers), extraHeadersEnc: seal(JSON.stringify(headers)) }
}

type HeaderRow = { extraHeaders: Prisma.JsonValue; extraHeadersEnc: string | null }

function plainObject(value: Prisma.JsonValue): HeaderMap {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {}
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'))
}

/** The headers to send (decrypted). A row from before encryption still holds them in plain text. */
export function headersOfRow(row: HeaderRow): HeaderMap {
  if (row.extraHeadersEnc) return plainObject(JSON.parse(unseal(row.extraHeadersEnc)) as Prisma.JsonValue)
  return plainObject(row.extraHeaders)
}

/** What people see: header names with masked values (a not yet sealed row is masked here). */
export function publicHeaders(row: HeaderRow): HeaderMap {
  const shown = plainObject(row.extraHeaders)
  return row.extraHeadersEnc ? shown : maskHeaders(shown)
}

/** Header values to keep out of records and shown output, like the API key. */
export function secretHeaderValues(headers: HeaderMap): string[] {
  return Object.values(headers).filter((v) => v.length >= SECRET_HEADER_MIN_LENGTH)
}

/**
 * Seal the extra headers of connections stored before they were encrypted (SQL cannot encrypt, so
 * the migration that added `extraHeadersEnc` leaves this to the application). Runs on every start
 * of the web server and of `parley worker`; idempotent, and a row changed meanwhile is left alone.
 * Returns how many rows it sealed.
 */
export async function sealLegacyHeaders(): Promise<number> {
  const { rows } = await sql().query<{ id: string; extraHeaders: Prisma.JsonValue }>(
    `SELECT id, "extraHeaders" FROM "LlmConnection" WHERE "extraHeadersEnc" IS NULL AND "extraHeaders" <> '{}'::jsonb`,
  )
  let sealed = 0
  for (const row of rows) {
    const columns = headerColumns(plainObject(row.extraHeaders))
    const r = await db.llmConnection.updateMany({
      where: { id: row.id, extraHeadersEnc: null, extraHeaders: { equals: row.extraHeaders ?? {} } },
      data: columns,
    })
    sealed += r.count
  }
  return sealed
}
