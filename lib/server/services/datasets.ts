import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { maxUploadBytes, maxUploadMb, uploadTooLargeMessage } from '@/lib/limits.mjs'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { db, pgTransaction } from '@/lib/server/db'
import { badRequest, conflict, notFound, tooLarge } from '@/lib/server/errors'
import { bulkJobOptions, queue, wakeWorkers } from '@/lib/server/jobs/queue'
import { defineOperation, validationFailure } from '@/lib/server/operation'
import { pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit, writeAuditSql } from '@/lib/server/audit'
import { DATASET_IMPORT_QUEUE, type DatasetImportJob } from '@/lib/server/services/dataset-import'
import { datasetKind } from '@/lib/server/services/dataset-kinds'
import { id, requireStudyAccess, studyAccess } from '@/lib/server/services/studies'
import { storeUpload } from '@/lib/server/uploads'

const fileInput = z.instanceof(File, { message: 'Choose a file.' }).refine((f) => f.size > 0, 'The file is empty.')

/** The files of a request field: one file, several, or none (empty files, as a form sends for "none", dropped). */
function filesOf(field: string, v: unknown): File[] {
  const all = v === undefined || v === null || v === '' ? [] : Array.isArray(v) ? v : [v]
  if (!all.every((f) => f instanceof File)) throw badRequest(`${field}: send files.`, { [field]: ['Send files.'] })
  return (all as File[]).filter((f) => f.size > 0)
}

/** A kind's options read from the request's fields: 400 with the fields' problems, before anything is stored. */
function optionsOf(schema: z.ZodType, input: unknown): unknown {
  const r = schema.safeParse(input)
  if (r.success) return r.data
  const f = validationFailure(r.error)
  throw badRequest(f.error, f.fieldErrors)
}

export const ImportDatasetInput = z
  .object({
    studyId: id,
    name: z.string({ error: 'Name the dataset.' }).trim().min(1, 'Name the dataset.').max(120),
    kind: z
      .string({ error: 'Choose the kind of dataset.' })
      .trim()
      .min(1, 'Choose the kind of dataset.')
      .max(60, 'Choose the kind of dataset.'),
    file: fileInput,
  })
  // The kind's own fields (its attachments and options) are read once the kind is known.
  .catchall(z.unknown())
export type ImportDatasetInput = z.infer<typeof ImportDatasetInput>

/**
 * Start an import: the kind is found among the plugins' dataset kinds (an unknown one is refused,
 * naming those there are), its options checked; the files go into PostgreSQL as they stream out of
 * the request, with the dataset (status `importing`) and its job, in one transaction; the job
 * (services/dataset-import.ts) streams them through the kind's parser and inserts the rows, all or
 * nothing. Answers at once with the dataset's id; `awaitDatasetImport` tells the outcome. Every
 * import goes through here, whichever protocol's kind it is and whichever operation takes it.
 */
export async function startDatasetImport(actor: Actor, input: ImportDatasetInput) {
  await requireStudyAccess(db, actor, input.studyId, 'write')
  const def = await datasetKind(input.kind)
  const attachments = (def.attachments ?? []).map((a) => ({ field: a.field, files: filesOf(a.field, input[a.field]) }))
  const options = def.options ? optionsOf(def.options, input) : undefined
  const bytes = [input.file, ...attachments.flatMap((a) => a.files)].reduce((n, f) => n + f.size, 0)
  if (bytes > maxUploadBytes()) throw tooLarge(uploadTooLargeMessage(bytes, maxUploadMb()))
  const b = await queue(DATASET_IMPORT_QUEUE)
  const datasetId = randomUUID()
  const job: DatasetImportJob = {
    datasetId,
    actor: actorRef(actor),
    ...(options !== undefined ? { options } : {}),
  }
  await pgTransaction(async (client) => {
    await client.query(
      `INSERT INTO "Dataset" (id, "studyId", name, kind, source, status, "createdById")
       VALUES ($1, $2, $3, $4, $5, 'importing', $6)`,
      [datasetId, input.studyId, input.name, input.kind, input.file.name, actor.userId || null],
    )
    await storeUpload(client, datasetId, 'data', 0, input.file)
    let position = 0
    for (const a of attachments) for (const f of a.files) await storeUpload(client, datasetId, a.field, ++position, f)
    await writeAuditSql(client, {
      actor: actorRef(actor),
      action: 'dataset.import-start',
      resourceType: 'dataset',
      resourceId: datasetId,
      studyId: input.studyId,
      after: {
        name: input.name,
        kind: input.kind,
        source: input.file.name,
        bytes,
        ...Object.fromEntries(attachments.map((a) => [a.field, a.files.length])),
      },
    })
    // The job commits with the dataset and its files, or not at all.
    await b.send(DATASET_IMPORT_QUEUE, job, {
      ...bulkJobOptions(),
      db: { executeSql: (text, values) => client.query(text, values) },
    })
  })
  await wakeWorkers(DATASET_IMPORT_QUEUE)
  return { id: datasetId, name: input.name, status: 'importing' as const, job }
}

/** Start an import of any kind (see `startDatasetImport`). */
export const importDataset = defineOperation({
  name: 'datasets.import',
  scope: 'studies:update',
  input: ImportDatasetInput,
  async run(actor, input) {
    const { job: _job, ...started } = await startDatasetImport(actor, input)
    return started
  },
})

/** Experiments run only on a dataset whose import finished: one importing or failed has no instances to use. */
export function assertImported(dataset: { name: string; status: string }) {
  if (dataset.status === 'ready') return
  throw badRequest(
    `"${dataset.name}" ${dataset.status === 'importing' ? 'is still importing' : 'failed to import'}; choose a dataset that has been imported.`,
    { datasetId: ['Choose an imported dataset.'] },
  )
}

async function findDataset(actor: Actor, datasetId: string, need: 'read' | 'write' = 'read') {
  const d = await db.dataset.findUnique({
    where: { id: datasetId },
    select: { id: true, studyId: true, name: true, status: true },
  })
  if (!d) throw notFound('Dataset')
  await requireStudyAccess(db, actor, d.studyId, need)
  return d
}

/**
 * The outcome of an import, waiting up to `waitMs` for it to finish: ready (with its counts) or
 * still importing (with its progress); a failed import answers 400 with the reason (the rows with
 * problems, by line).
 */
export const awaitDatasetImport = defineOperation({
  name: 'datasets.await-import',
  scope: 'studies:read',
  input: z.object({ datasetId: id, waitMs: z.coerce.number().int().min(0).max(60_000).default(0) }),
  async run(actor, { datasetId, waitMs }) {
    await findDataset(actor, datasetId)
    const until = Date.now() + waitMs
    for (;;) {
      const d = await db.dataset.findUniqueOrThrow({
        where: { id: datasetId },
        select: { id: true, name: true, status: true, rowsDone: true, rowsTotal: true, error: true },
      })
      if (d.status === 'failed') throw badRequest(d.error ?? 'Nothing was imported.')
      if (d.status === 'ready') {
        const assets = await db.asset.count({ where: { datasetId } })
        return { ...d, instances: d.rowsTotal ?? 0, assets }
      }
      if (Date.now() >= until) return { ...d, instances: 0, assets: 0 }
      await new Promise((r) => setTimeout(r, 200))
    }
  },
})

/** Remove a failed import (it holds nothing but its reason). Ready datasets stay: experiments use them. */
export const dismissDataset = defineOperation({
  name: 'datasets.dismiss',
  scope: 'studies:update',
  input: z.object({ datasetId: id }),
  async run(actor, { datasetId }) {
    const d = await findDataset(actor, datasetId, 'write')
    if (d.status !== 'failed') throw conflict(`Only a failed import can be dismissed; "${d.name}" is ${d.status}.`)
    await db.$transaction(async (tx) => {
      await tx.dataset.delete({ where: { id: d.id } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'dataset.dismiss',
        resourceType: 'dataset',
        resourceId: d.id,
        studyId: d.studyId,
        before: { name: d.name, status: d.status },
      })
    })
    return { id: d.id }
  },
})

export const listDatasets = defineOperation({
  name: 'datasets.list',
  scope: 'studies:read',
  input: z.object({ studyId: id }),
  async run(actor, { studyId }) {
    await requireStudyAccess(db, actor, studyId, 'read')
    return db.dataset.findMany({
      where: { studyId },
      select: {
        id: true,
        name: true,
        kind: true,
        source: true,
        status: true,
        rowsDone: true,
        rowsTotal: true,
        error: true,
        createdAt: true,
        _count: { select: { instances: true, assets: true } },
      },
      orderBy: { createdAt: 'desc' },
    })
  },
})

export const getDataset = defineOperation({
  name: 'datasets.get',
  scope: 'studies:read',
  input: z.object({ datasetId: id, ...pageInput }),
  async run(actor, { datasetId, page, pageSize }) {
    const dataset = await db.dataset.findUnique({
      where: { id: datasetId },
      select: {
        id: true,
        name: true,
        kind: true,
        source: true,
        status: true,
        rowsDone: true,
        rowsTotal: true,
        error: true,
        createdAt: true,
        studyId: true,
        study: { select: { name: true } },
      },
    })
    if (!dataset) throw notFound('Dataset')
    await requireStudyAccess(db, actor, dataset.studyId, 'read')
    const [items, total] = await Promise.all([
      db.instance.findMany({ where: { datasetId }, orderBy: { index: 'asc' }, ...skipTake(page, pageSize) }),
      db.instance.count({ where: { datasetId } }),
    ])
    return { dataset, instances: pageOf(items, total, page, pageSize) }
  },
})

/**
 * An asset's bytes (used by the image route): for people who read its study, every image of its
 * datasets; for anyone else (experts and annotators), only an image their own work shows, i.e. one
 * named in the input of an instance that a session assigned to them runs on. Everything else: 404.
 */
export async function readAsset(actor: Actor, datasetId: string, name: string) {
  const asset = await db.asset.findUnique({
    where: { datasetId_name: { datasetId, name } },
    include: { dataset: { select: { studyId: true } } },
  })
  if (!asset) throw notFound('Image')
  if (hasScope(actor.role, 'studies:read') && (await studyAccess(actor, asset.dataset.studyId)).includes('read'))
    return asset
  if (hasScope(actor.role, 'work:read-own') && (await ownSessionShows(actor, datasetId, name))) return asset
  throw notFound('Image')
}

/** Does a session in which the actor fills a seat run on an instance of this dataset whose input names `name`? */
async function ownSessionShows(actor: Actor, datasetId: string, name: string): Promise<boolean> {
  const rows = await db.$queryRaw<Array<{ hit: number }>>`
    SELECT 1 AS hit
    FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId" JOIN "Instance" i ON i.id = s."instanceId"
    WHERE p."userId" = ${actor.userId} AND i."datasetId" = ${datasetId}
      AND CASE WHEN jsonb_typeof(i.input) = 'object'
               THEN EXISTS (SELECT 1 FROM jsonb_each(i.input) kv WHERE kv.value = to_jsonb(${name}::text))
               ELSE false END
    LIMIT 1`
  return rows.length > 0
}
