import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { maxImagesBytes, maxImportRows } from '@/lib/limits.mjs'
import { baseName, type InstanceInput, mimeOf, type RowError } from '@/lib/tasks/datasets'
import { extractZip, listZip, ZipTooLarge, ZipUnreadable } from '@/lib/tasks/zip'
import { db, sql } from '@/lib/server/db'
import { publish } from '@/lib/server/live'
import { writeAudit } from '@/lib/server/audit'
import type { DatasetItem, DatasetSource, ImportFile } from '@/lib/server/engine/datasets'
import { findDatasetKind } from '@/lib/server/services/dataset-kinds'
import { readUpload } from '@/lib/server/uploads'
import { log } from '@/lib/server/log'

/**
 * A dataset import, run as a job (queue `dataset-import`) off the request path, for every dataset
 * kind a plugin declares (lib/server/engine/datasets.ts). The request stored the files
 * (lib/server/uploads.ts) and a dataset row with status `importing`; this job:
 *
 *  1. lists the images (a kind with an `images` attachment): loose files, and the entries of each zip
 *     by their declared sizes, without inflating anything; more than PARLEY_MAX_IMAGES_MB declared
 *     stops it here;
 *  2. checks every item the kind's parser streams out of the files (bounded memory, yielding the
 *     event loop), with the row cap (PARLEY_MAX_IMPORT_ROWS); progress = rows checked;
 *  3. only if no row has a problem: stores the images the rows refer to (inflated slice by slice,
 *     counted against the cap and each entry's declared size), then the instances, 1,000 per
 *     statement; progress = rows inserted / total;
 *  4. marks the dataset `ready` and drops the uploaded files.
 *
 * All or nothing: any problem leaves the dataset `failed`, holding no instance and no image, with
 * the reason (the rows with problems, listed by line); experiments only ever use `ready` datasets.
 * A retry (a crashed worker's job coming back) starts over; an advisory lock keeps two workers off
 * one dataset.
 */
export const DATASET_IMPORT_QUEUE = 'dataset-import'

export interface DatasetImportJob {
  datasetId: string
  /** The kind's options as its schema read them at the request. */
  options?: unknown
  /** Jobs queued before kinds had options carried the one option there was (the generic column mapping). */
  mapping?: unknown
  /** Who asked for the import (for the audit row). */
  actor: { userId: string | null; email: string | null; via: string }
}

const BATCH = 1000
/** Records between two yields of the event loop (other requests run in between). */
const YIELD_EVERY = 250
const PROGRESS_EVERY_MS = 500
const MB = 1024 * 1024

/** A refusal the person can act on: the dataset fails with this message. */
class ImportRefused extends Error {}

export function nothingImported(errors: RowError[], count: number): string {
  // A problem of the file as a whole (line 0: a zip without its instances …) is the one thing to say.
  if (count === 1 && errors[0]?.line === 0) return `Nothing was imported: ${errors[0].message}`
  const shown = errors.slice(0, 20).map((e) => (e.line ? `line ${e.line}: ${e.message}` : e.message))
  const more = count > 20 ? ` … and ${count - 20} more` : ''
  return `Nothing was imported: ${count} row${count > 1 ? 's have' : ' has'} problems. ${shown.join(' | ')}${more}`
}

const imagesTooLarge = (limit: number) =>
  `Nothing was imported: the images are larger than ${Math.round(limit / MB)} MB in all once unpacked (PARLEY_MAX_IMAGES_MB); import fewer at a time.`

const isImage = (name: string) => {
  const base = baseName(name)
  return !name.endsWith('/') && !base.startsWith('.') && mimeOf(base) !== null
}

/** Run one import job: at most one worker per dataset at a time (a session-level advisory lock). */
export async function runDatasetImport(job: DatasetImportJob): Promise<void> {
  const client = await sql().connect()
  const key = `dataset-import:${job.datasetId}`
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key])
    // Another worker still has it (this job came back after its expiry): let the queue retry later.
    if (!rows[0]?.ok) throw new Error(`dataset ${job.datasetId} is being imported by another worker`)
    try {
      await importLocked(job)
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key])
    }
  } finally {
    client.release()
  }
}

async function importLocked(job: DatasetImportJob): Promise<void> {
  const datasetId = job.datasetId
  const dataset = await db.dataset.findUnique({
    where: { id: datasetId },
    include: { uploads: { select: { id: true, role: true, name: true, size: true }, orderBy: { position: 'asc' } } },
  })
  if (dataset?.status !== 'importing') return
  const kind = dataset.kind
  const def = await findDatasetKind(kind)
  const imageRoles = new Set((def?.attachments ?? []).filter((a) => a.images).map((a) => a.field))
  const dataFile = dataset.uploads.find((u) => u.role === 'data')
  const imageFiles = dataset.uploads.filter((u) => imageRoles.has(u.role))
  const file = (u: (typeof dataset.uploads)[number]): ImportFile => ({
    role: u.role,
    name: u.name,
    size: u.size,
    read: () => readUpload(u.id),
  })

  let lastProgress = 0
  const progress = async (done: number, total: number | null, force = false) => {
    if (!force && Date.now() - lastProgress < PROGRESS_EVERY_MS) return
    lastProgress = Date.now()
    await sql().query('UPDATE "Dataset" SET "rowsDone" = $2, "rowsTotal" = $3 WHERE id = $1', [datasetId, done, total])
    await publish(`dataset:${datasetId}`, { type: 'progress' })
  }

  try {
    if (!def) throw new ImportRefused(`Nothing was imported: no protocol imports datasets of kind "${kind}".`)
    if (!dataFile) throw new ImportRefused('Nothing was imported: the data file is missing.')
    // A retry after a crash starts over.
    await sql().query('DELETE FROM "Instance" WHERE "datasetId" = $1', [datasetId])
    await sql().query('DELETE FROM "Asset" WHERE "datasetId" = $1', [datasetId])
    await progress(0, null, true)

    // 1. The images there are, by name, and what they declare to weigh once unpacked.
    const maxImages = maxImagesBytes()
    let available: Set<string> | undefined
    if (imageRoles.size) {
      available = new Set()
      let declared = 0
      for (const f of imageFiles) {
        if (/\.zip$/i.test(f.name)) {
          let entries: Awaited<ReturnType<typeof listZip>>
          try {
            entries = await listZip(readUpload(f.id))
          } catch {
            throw new ImportRefused(`${f.name} is not a readable zip archive.`)
          }
          for (const e of entries)
            if (isImage(e.name)) {
              available.add(baseName(e.name))
              declared += e.declaredSize ?? 0
            }
        } else if (isImage(f.name)) {
          available.add(baseName(f.name))
          declared += f.size
        }
        if (declared > maxImages) throw new ImportRefused(imagesTooLarge(maxImages))
      }
    }

    // 2. Every item checked before anything is stored.
    const source: DatasetSource = {
      data: file(dataFile),
      attachments: dataset.uploads.filter((u) => u.role !== 'data').map(file),
      options: job.options ?? (job.mapping ? { mapping: job.mapping } : undefined),
      availableAssets: available,
    }
    const maxRows = maxImportRows()
    const errors: RowError[] = []
    let problems = 0
    let rows = 0
    const referenced = new Set<string>()
    const note = (item: DatasetItem) => {
      if ('problem' in item) {
        problems++
        if (errors.length < 20) errors.push({ line: item.line, message: item.problem })
      } else {
        rows++
        if (item.asset) referenced.add(item.asset)
      }
    }
    let items = 0
    for await (const item of def.parse(source)) {
      if (++items > maxRows)
        throw new ImportRefused(
          `Nothing was imported: the file has more than ${maxRows.toLocaleString('en')} rows, the most one import takes (PARLEY_MAX_IMPORT_ROWS). Split it, or ask the administrator to raise the limit.`,
        )
      note(item)
      if (items % YIELD_EVERY === 0) {
        await progress(items, null)
        await yieldToLoop()
      }
    }
    if (!problems && !rows) note({ line: 0, problem: 'The file holds no instances.' })
    if (problems) throw new ImportRefused(nothingImported(errors, problems))
    await progress(0, rows, true)

    // 3. The images the rows refer to (each name once; a later file wins, as a later upload would).
    let assets = 0
    const storeAsset = async (name: string, bytes: Buffer) => {
      const base = baseName(name)
      const r = await sql().query(
        `INSERT INTO "Asset" (id, "datasetId", name, mime, bytes) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT ("datasetId", name) DO UPDATE SET mime = EXCLUDED.mime, bytes = EXCLUDED.bytes
         RETURNING (xmax = 0) AS inserted`,
        [randomUUID(), datasetId, base, mimeOf(base), bytes],
      )
      if (r.rows[0]?.inserted) assets++
    }
    if (referenced.size) {
      let unpacked = 0
      for (const f of imageFiles) {
        if (/\.zip$/i.test(f.name)) {
          try {
            await extractZip(readUpload(f.id), {
              want: (name) => isImage(name) && referenced.has(baseName(name)),
              maxBytes: maxImages - unpacked,
              onFile: async (name, bytes) => {
                unpacked += bytes.length
                await storeAsset(name, bytes)
              },
            })
          } catch (err) {
            if (err instanceof ZipTooLarge) throw new ImportRefused(imagesTooLarge(maxImages))
            if (err instanceof ZipUnreadable)
              throw new ImportRefused(`Nothing was imported: ${f.name} cannot be unpacked: ${err.message}`)
            throw err
          }
        } else if (isImage(f.name) && referenced.has(baseName(f.name))) {
          const parts: Uint8Array[] = []
          for await (const piece of readUpload(f.id)) parts.push(piece)
          unpacked += f.size
          if (unpacked > maxImages) throw new ImportRefused(imagesTooLarge(maxImages))
          await storeAsset(f.name, Buffer.concat(parts))
        }
      }
    }

    // 4. The instances, a batch per statement, from a second pass over the checked files.
    let batch: InstanceInput[] = []
    let inserted = 0
    const flush = async () => {
      if (!batch.length) return
      await insertInstances(datasetId, batch)
      inserted += batch.length
      batch = []
      await progress(inserted, rows)
      await yieldToLoop()
    }
    for await (const item of def.parse(source)) {
      // The files were checked a moment ago; a difference now means they changed under us.
      if ('problem' in item) throw new Error(`line ${item.line} changed between the check and the insert`)
      batch.push(item.row)
      if (batch.length >= BATCH) await flush()
      else if (batch.length % YIELD_EVERY === 0) await yieldToLoop()
    }
    await flush()

    await db.$transaction(async (tx) => {
      await tx.dataset.update({
        where: { id: datasetId },
        data: { status: 'ready', rowsDone: inserted, rowsTotal: inserted, error: null },
      })
      await tx.datasetUpload.deleteMany({ where: { datasetId } })
      await writeAudit(tx, {
        actor: job.actor,
        action: 'dataset.import',
        resourceType: 'dataset',
        resourceId: datasetId,
        studyId: dataset.studyId,
        after: { name: dataset.name, kind, source: dataset.source, instances: inserted, assets },
      })
    })
    await publish(`dataset:${datasetId}`, { type: 'status', status: 'ready' })
  } catch (err) {
    const message =
      err instanceof ImportRefused
        ? err.message
        : 'Nothing was imported: the import stopped on an error on our side. Please try again.'
    if (!(err instanceof ImportRefused)) log().error({ err, datasetId }, 'dataset import failed')
    await failImport(datasetId, dataset.studyId, job.actor, message)
  }
}

/** A failed import keeps nothing but its reason. */
async function failImport(datasetId: string, studyId: string, actor: DatasetImportJob['actor'], error: string) {
  await sql().query('DELETE FROM "Instance" WHERE "datasetId" = $1', [datasetId])
  await sql().query('DELETE FROM "Asset" WHERE "datasetId" = $1', [datasetId])
  await db.$transaction(async (tx) => {
    await tx.dataset.update({ where: { id: datasetId }, data: { status: 'failed', error, rowsDone: 0 } })
    await tx.datasetUpload.deleteMany({ where: { datasetId } })
    await writeAudit(tx, {
      actor,
      action: 'dataset.import-failed',
      resourceType: 'dataset',
      resourceId: datasetId,
      studyId,
      after: { error },
    })
  })
  await publish(`dataset:${datasetId}`, { type: 'status', status: 'failed' })
}

/** One statement for a batch of instances (a JSON array unpacked by PostgreSQL). */
async function insertInstances(datasetId: string, rows: InstanceInput[]) {
  const data = JSON.stringify(
    rows.map((r) => ({
      id: randomUUID(),
      index: r.index,
      input: r.input,
      prediction: r.prediction,
      explanation: r.explanation,
      meta: r.meta,
    })),
  )
  await sql().query(
    `INSERT INTO "Instance" (id, "datasetId", index, input, prediction, explanation, meta)
     SELECT x.id, $1, x.index, x.input, x.prediction, x.explanation, x.meta
     FROM jsonb_to_recordset($2::jsonb) AS x(id text, index int, input jsonb, prediction text, explanation text, meta jsonb)`,
    [datasetId, data],
  )
}
