import { unzipSync } from 'fflate'
import { z } from 'zod'
import { jsonText } from '@/lib/server/input'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { DATASET_KINDS, GenericMapping, baseName, mimeOf, parseDataset } from '@/lib/tasks/datasets'
import { db } from '@/lib/server/db'
import { AppError, badRequest, notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { id, requireStudyAccess, studyAccess } from '@/lib/server/services/studies'

const MAX_FILE = 20 * 1024 * 1024
const MAX_IMAGES = 200 * 1024 * 1024

const fileInput = z.instanceof(File, { message: 'Choose a file.' }).refine((f) => f.size > 0, 'The file is empty.')
const filesInput = z.preprocess((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]), z.array(z.instanceof(File)))

/** Images from loose files and/or zip archives, by file name (folders dropped). */
async function collectImages(files: File[]): Promise<Map<string, { mime: string; bytes: Uint8Array }>> {
  const out = new Map<string, { mime: string; bytes: Uint8Array }>()
  let total = 0
  const add = (name: string, bytes: Uint8Array) => {
    const base = baseName(name)
    const mime = mimeOf(base)
    if (!mime || base.startsWith('.')) return
    total += bytes.byteLength
    if (total > MAX_IMAGES)
      throw new AppError(413, `Images larger than ${MAX_IMAGES / 1024 / 1024} MB in all; import fewer at a time.`)
    out.set(base, { mime, bytes })
  }
  for (const f of files) {
    if (f.size === 0) continue
    const bytes = new Uint8Array(await f.arrayBuffer())
    if (/\.zip$/i.test(f.name)) {
      let entries: Record<string, Uint8Array>
      try {
        entries = unzipSync(bytes)
      } catch {
        throw badRequest(`${f.name} is not a readable zip archive.`)
      }
      for (const [name, data] of Object.entries(entries)) if (!name.endsWith('/')) add(name, data)
    } else add(f.name, bytes)
  }
  return out
}

export const importDataset = defineOperation({
  name: 'datasets.import',
  scope: 'studies:update',
  input: z.object({
    studyId: id,
    name: z.string({ error: 'Name the dataset.' }).trim().min(1, 'Name the dataset.').max(120),
    kind: z.enum(DATASET_KINDS, { message: 'Choose RAD, DRUG, generic or diagnosis cases.' }),
    file: fileInput.refine((f) => f.size <= MAX_FILE, `Use a file under ${MAX_FILE / 1024 / 1024} MB.`),
    images: filesInput.optional(),
    mapping: jsonText(GenericMapping).optional(),
  }),
  async run(actor, input) {
    await requireStudyAccess(db, actor, input.studyId, 'write')
    const images = input.kind === 'rad' ? await collectImages(input.images ?? []) : new Map()
    const parsed = parseDataset(input.kind, input.file.name, await input.file.text(), {
      mapping: input.mapping,
      availableAssets: input.kind === 'rad' ? new Set(images.keys()) : undefined,
    })
    if (parsed.errors.length) {
      const shown = parsed.errors.slice(0, 20).map((e) => `line ${e.line}: ${e.message}`)
      const more = parsed.errors.length > 20 ? ` … and ${parsed.errors.length - 20} more` : ''
      throw badRequest(
        `Nothing was imported: ${parsed.errors.length} row${parsed.errors.length > 1 ? 's have' : ' has'} problems. ${shown.join(' | ')}${more}`,
      )
    }
    // One transaction: the dataset, every instance and every referenced image, or nothing.
    return db.$transaction(
      async (tx) => {
        const dataset = await tx.dataset.create({
          data: {
            studyId: input.studyId,
            name: input.name,
            kind: input.kind,
            source: input.file.name,
            createdById: actor.userId || null,
          },
        })
        await tx.instance.createMany({
          data: parsed.rows.map((r) => ({
            datasetId: dataset.id,
            index: r.index,
            input: r.input as object,
            prediction: r.prediction,
            explanation: r.explanation,
            meta: r.meta as object,
          })),
        })
        for (const name of parsed.assets) {
          const img = images.get(name)
          if (img)
            await tx.asset.create({
              data: { datasetId: dataset.id, name, mime: img.mime, bytes: Buffer.from(img.bytes) },
            })
        }
        await writeAudit(tx, {
          actor: actorRef(actor),
          action: 'dataset.import',
          resourceType: 'dataset',
          resourceId: dataset.id,
          studyId: input.studyId,
          after: {
            name: input.name,
            kind: input.kind,
            source: input.file.name,
            instances: parsed.rows.length,
            assets: parsed.assets.length,
          },
        })
        return { id: dataset.id, name: dataset.name, instances: parsed.rows.length, assets: parsed.assets.length }
      },
      { timeout: 120_000 },
    )
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

/** Does a session assigned to the actor run on an instance of this dataset whose input names `name`? */
async function ownSessionShows(actor: Actor, datasetId: string, name: string): Promise<boolean> {
  const rows = await db.$queryRaw<Array<{ hit: number }>>`
    SELECT 1 AS hit
    FROM "ProtocolSession" s JOIN "Instance" i ON i.id = s."instanceId"
    WHERE s."assigneeId" = ${actor.userId} AND i."datasetId" = ${datasetId}
      AND CASE WHEN jsonb_typeof(i.input) = 'object'
               THEN EXISTS (SELECT 1 FROM jsonb_each(i.input) kv WHERE kv.value = to_jsonb(${name}::text))
               ELSE false END
    LIMIT 1`
  return rows.length > 0
}
