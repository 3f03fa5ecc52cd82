import { strFromU8 } from 'fflate'
import { z } from 'zod'
import type { Prisma } from '@/lib/generated/prisma/client'
import type { ScorekeepingInstance } from '@/lib/protocols/scorekeeping'
import { extractZip, ZipTooLarge, ZipUnreadable } from '@/lib/tasks/zip'
import { ClembenchError, generateInstances, parseInstancesFile, privateSharedResources } from '@/lib/tasks/clembench'
import { db } from '@/lib/server/db'
import { badRequest, tooLarge } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/**
 * clembench's privateshared instances as a dataset of a study (kind "clembench"): the game's folder
 * as a zip (`in/instances.json` or an older instance file, and `resources/`), or an instances file
 * with the resources zip beside it; or new instances generated from the resources' slot values with a
 * seed. Every instance is checked; nothing is stored when one does not fit.
 */
const MAX_FILE_BYTES = 20 * 1024 * 1024
const MAX_ENTRY_BYTES = 5 * 1024 * 1024
const MAX_TOTAL_BYTES = 50 * 1024 * 1024

/**
 * The text files of a zip (JSON and templates only), read by the streaming reader of lib/tasks/zip.ts:
 * declared sizes are checked before anything inflates and the inflated bytes are counted, so a zip
 * bomb (or a header that lies) is refused after a few MB, never held in memory.
 */
export async function textFilesOfZip(bytes: Uint8Array): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const wanted = (name: string) => /\.(json|template)$/i.test(name) && !name.includes('__MACOSX')
  try {
    await extractZip(
      (async function* () {
        yield bytes
      })(),
      {
        want: wanted,
        maxBytes: MAX_TOTAL_BYTES,
        async onFile(name, data) {
          if (data.length > MAX_ENTRY_BYTES)
            throw tooLarge(`Refused: ${name} is larger than ${MAX_ENTRY_BYTES / 1024 / 1024} MB.`)
          out[name.replace(/\\/g, '/')] = strFromU8(data)
        },
      },
    )
  } catch (err) {
    if (err instanceof ZipTooLarge)
      throw tooLarge(`Refused: the zip's texts are larger than ${MAX_TOTAL_BYTES / 1024 / 1024} MB in all.`)
    if (err instanceof ZipUnreadable)
      throw badRequest(`The file is not a zip that can be read: ${err.message}`, { file: ['Upload a zip.'] })
    throw err
  }
  return out
}

const file = z.instanceof(File, { message: 'Choose a file.' }).refine((f) => f.size <= MAX_FILE_BYTES, {
  message: `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB.`,
})

export const ImportClembenchInput = z.object({
  studyId: id,
  name: z.string({ error: 'Name the dataset.' }).trim().min(1, 'Name the dataset.').max(120),
  /** import: instances from a file; generate: new instances from the resources' slot values. */
  mode: z.enum(['import', 'generate']).default('import'),
  /** The game's folder as a zip, or an instances JSON file. */
  file,
  /** The resources as a zip, when `file` is an instances JSON file. */
  resources: file.optional(),
  /** Which instance file of the zip (default: in/instances.json). */
  instancesFile: z.string().trim().max(200).optional(),
  /** generate: the experiment, how many instances, the seed. */
  experiment: z.string().trim().max(100).optional(),
  count: z.coerce.number().int().min(1).max(500).default(10),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(42),
})

const isZip = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x4b

export const importClembench = defineOperation({
  name: 'scorekeeping.import',
  scope: 'studies:update',
  input: ImportClembenchInput,
  async run(actor, input) {
    await requireStudyAccess(db, actor, input.studyId, 'write')
    const main = new Uint8Array(await input.file.arrayBuffer())
    const texts: Record<string, string> = {}
    let instancesText: string | undefined
    if (isZip(main)) Object.assign(texts, await textFilesOfZip(main))
    else instancesText = strFromU8(main)
    if (input.resources) Object.assign(texts, await textFilesOfZip(new Uint8Array(await input.resources.arrayBuffer())))
    let instances: Array<{ experiment: string; instance: ScorekeepingInstance }>
    try {
      const resources = privateSharedResources(texts)
      if (input.mode === 'generate') {
        if (!input.experiment)
          throw badRequest('Name the experiment to generate instances for.', { experiment: ['Choose an experiment.'] })
        instances = generateInstances(resources, input.experiment, { count: input.count, seed: input.seed }).map(
          (i) => ({
            experiment: input.experiment as string,
            instance: i,
          }),
        )
      } else {
        const wanted = input.instancesFile ?? 'in/instances.json'
        if (instancesText === undefined) {
          const key = Object.keys(texts).find((k) => k === wanted || k.endsWith(`/${wanted}`))
          if (!key)
            throw badRequest(`The zip has no ${wanted}.`, { instancesFile: ['Name an instance file of the zip.'] })
          instancesText = texts[key] as string
        }
        const parsed = parseInstancesFile(
          instancesText,
          Object.keys(resources.experiments).length ? resources : undefined,
        )
        instances = parsed.experiments.flatMap((e) => e.instances.map((i) => ({ experiment: e.name, instance: i })))
      }
    } catch (err) {
      if (err instanceof ClembenchError) throw badRequest(err.message, { file: [err.message.split('\n')[0] as string] })
      throw err
    }
    if (!instances.length) throw badRequest('The file holds no game instances.')
    if (!instances.every((i) => i.instance.initialPrompt !== undefined && i.instance.reprompts))
      throw badRequest('The instances need their texts: upload the resources with them (the game folder as a zip).', {
        resources: ['Add the resources/ folder.'],
      })
    return db.$transaction(
      async (tx) => {
        const ds = await tx.dataset.create({
          data: {
            studyId: input.studyId,
            name: input.name,
            kind: 'clembench',
            source: input.file.name,
            createdById: actor.userId || null,
          },
        })
        await tx.instance.createMany({
          data: instances.map((x, index) => ({
            datasetId: ds.id,
            index,
            input: x.instance as unknown as Prisma.InputJsonValue,
            prediction: '',
            explanation: '',
            meta: { experiment: x.experiment, gameId: x.instance.gameId ?? null },
          })),
        })
        const experiments = [...new Set(instances.map((x) => x.experiment))]
        await writeAudit(tx, {
          actor: actorRef(actor),
          action: 'dataset.import',
          resourceType: 'dataset',
          resourceId: ds.id,
          studyId: input.studyId,
          after: { name: input.name, kind: 'clembench', mode: input.mode, instances: instances.length, experiments },
        })
        return { id: ds.id, instances: instances.length, experiments }
      },
      { timeout: 60_000 },
    )
  },
})
