import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { sql } from '@/lib/server/db'

/**
 * Uploaded files kept in PostgreSQL until a job has read them (any app instance or worker can), in
 * pieces of about 1 MB: the request writes them as they stream out of the form, the job reads one
 * piece per statement. Neither side ever holds a second copy of the whole file.
 */
export const UPLOAD_PIECE_BYTES = 1024 * 1024

/** `data` for the data file, otherwise the field of the dataset kind's attachment it came in (e.g. images). */
export type UploadRole = string

/** Store one file for a dataset's import, with the caller's client (inside its transaction). */
export async function storeUpload(
  client: pg.ClientBase,
  datasetId: string,
  role: UploadRole,
  position: number,
  file: File,
): Promise<string> {
  const id = randomUUID()
  await client.query(
    'INSERT INTO "DatasetUpload" (id, "datasetId", role, name, size, position) VALUES ($1, $2, $3, $4, $5, $6)',
    [id, datasetId, role, file.name, file.size, position],
  )
  let seq = 0
  let parts: Uint8Array[] = []
  let held = 0
  const flush = async () => {
    if (!held) return
    await client.query('INSERT INTO "DatasetUploadChunk" ("uploadId", seq, bytes) VALUES ($1, $2, $3)', [
      id,
      seq++,
      Buffer.concat(parts, held),
    ])
    parts = []
    held = 0
  }
  const reader = file.stream().getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parts.push(value)
    held += value.byteLength
    if (held >= UPLOAD_PIECE_BYTES) await flush()
  }
  await flush()
  return id
}

/** An upload's bytes, one stored piece at a time. */
export async function* readUpload(uploadId: string): AsyncGenerator<Uint8Array> {
  for (let seq = 0; ; seq++) {
    const { rows } = await sql().query<{ bytes: Buffer }>(
      'SELECT bytes FROM "DatasetUploadChunk" WHERE "uploadId" = $1 AND seq = $2',
      [uploadId, seq],
    )
    const piece = rows[0]?.bytes
    if (!piece) return
    yield piece
  }
}
