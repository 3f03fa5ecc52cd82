import { strFromU8 } from 'fflate'
import { z } from 'zod'
import type { ScorekeepingInstance } from '@/protocols/scorekeeping/core'
import { extractZip, ZipTooLarge, ZipUnreadable } from '@/lib/tasks/zip'
import {
  ClembenchError,
  generateInstances,
  parseInstancesFile,
  privateSharedResources,
} from '@/protocols/scorekeeping/core/clembench'
import {
  AppError,
  ImportDatasetInput,
  badRequest,
  db,
  defineOperation,
  startDatasetImport,
  tooLarge,
  type DatasetItem,
  type DatasetKind,
  type DatasetSource,
  type ImportFile,
  type PluginEndpoint,
} from '@/lib/server/sdk'

/**
 * clembench's privateshared instances as a dataset of a study (kind "clembench"): the game's folder
 * as a zip (`in/instances.json` or an older instance file, and `resources/`), or an instances file
 * with the resources zip beside it; or new instances generated from the resources' slot values with a
 * seed. Imported by the one import job like every dataset kind: every instance is checked; nothing
 * is stored when one does not fit. A zip is read whole (its directory is at its end), so a file is
 * held in memory up to MAX_FILE_BYTES; the texts it inflates are capped as they inflate.
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

/** The options of a clembench import, read from the request's fields (a form's or a REST upload's). */
export const ClembenchOptions = z
  .object({
    /** import: instances from a file; generate: new instances from the resources' slot values. */
    mode: z.enum(['import', 'generate']).default('import'),
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
  .superRefine((o, ctx) => {
    if (o.mode === 'generate' && !o.experiment)
      ctx.addIssue({ code: 'custom', path: ['experiment'], message: 'Name the experiment to generate instances for.' })
  })
export type ClembenchOptions = z.infer<typeof ClembenchOptions>

const isZip = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x4b

/** A whole upload (a zip is read from its end, so it is held whole; MAX_FILE_BYTES bounds it). */
async function bytesOf(f: ImportFile): Promise<Uint8Array> {
  if (f.size > MAX_FILE_BYTES) throw new ImportProblem(`${f.name} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB.`)
  const parts: Uint8Array[] = []
  for await (const p of f.read()) parts.push(p)
  return Buffer.concat(parts)
}

/** What is wrong with the files as a whole (the import fails with it, storing nothing). */
class ImportProblem extends Error {}

/** The game instances of an upload, each with its experiment: the import's or the generator's. */
async function gamesOf(
  source: DatasetSource<ClembenchOptions>,
): Promise<Array<{ experiment: string; instance: ScorekeepingInstance }>> {
  const o = source.options
  const main = await bytesOf(source.data)
  const texts: Record<string, string> = {}
  let instancesText: string | undefined
  if (isZip(main)) Object.assign(texts, await textFilesOfZip(main))
  else instancesText = strFromU8(main)
  for (const r of source.attachments.filter((a) => a.role === 'resources'))
    Object.assign(texts, await textFilesOfZip(await bytesOf(r)))
  const resources = privateSharedResources(texts)
  if (o.mode === 'generate') {
    const experiment = o.experiment as string
    return generateInstances(resources, experiment, { count: o.count, seed: o.seed }).map((instance) => ({
      experiment,
      instance,
    }))
  }
  const wanted = o.instancesFile ?? 'in/instances.json'
  if (instancesText === undefined) {
    const key = Object.keys(texts).find((k) => k === wanted || k.endsWith(`/${wanted}`))
    if (!key) throw new ImportProblem(`The zip has no ${wanted}.`)
    instancesText = texts[key] as string
  }
  const parsed = parseInstancesFile(instancesText, Object.keys(resources.experiments).length ? resources : undefined)
  return parsed.experiments.flatMap((e) => e.instances.map((instance) => ({ experiment: e.name, instance })))
}

/**
 * The parser of the `clembench` kind, run by the one import job: the instances of the game folder
 * (or the generated ones), each an instance of the dataset, or one problem of the files as a whole
 * (line 0) when they cannot be read or an instance lacks its texts.
 */
async function* parseClembench(source: DatasetSource<ClembenchOptions>): AsyncGenerator<DatasetItem> {
  let games: Awaited<ReturnType<typeof gamesOf>>
  try {
    games = await gamesOf(source)
  } catch (err) {
    if (err instanceof ImportProblem || err instanceof ClembenchError || err instanceof AppError) {
      yield { line: 0, problem: err.message, fatal: true }
      return
    }
    throw err
  }
  if (!games.length) {
    yield { line: 0, problem: 'The file holds no game instances.', fatal: true }
    return
  }
  if (!games.every((g) => g.instance.initialPrompt !== undefined && g.instance.reprompts)) {
    yield {
      line: 0,
      problem: 'The instances need their texts: upload the resources with them (the game folder as a zip).',
      fatal: true,
    }
    return
  }
  for (const [index, g] of games.entries())
    yield {
      line: index + 1,
      row: {
        index,
        input: g.instance as unknown as Record<string, unknown>,
        prediction: '',
        explanation: '',
        meta: { experiment: g.experiment, gameId: g.instance.gameId ?? null },
      },
    }
}

/** scorekeeping's dataset kind: clembench's instances, imported with the protocol's own form. */
export const scorekeepingDatasets: Record<string, DatasetKind<ClembenchOptions>> = {
  clembench: {
    label: 'CLEMBENCH',
    description:
      "clembench privateshared instances: the game folder as a zip (in/instances.json and resources/), or an instances file with the resources' zip",
    accepts: '.zip,.json',
    attachments: [
      { field: 'resources', label: 'The resources as a zip (only with an instances file)', accept: '.zip' },
    ],
    options: ClembenchOptions,
    ownForm: true,
    parse: parseClembench,
  },
}

/**
 * Import clembench's instances (or generate them): the generic import of the `clembench` kind, so
 * it runs as the one import job does (progress, caps, all or nothing, on any worker) and answers at
 * once with the dataset's id; `/datasets/{datasetId}/import` tells the outcome.
 */
export const importClembench = defineOperation({
  name: 'scorekeeping.import',
  scope: 'studies:update',
  input: ImportDatasetInput.omit({ kind: true }),
  async run(actor, input) {
    const { job: _job, ...started } = await startDatasetImport(actor, { ...input, kind: 'clembench' })
    return started
  },
})

/** The experiments of an imported clembench dataset (what the import form reports). */
export async function clembenchExperiments(datasetId: string): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ experiment: string }>>`
    SELECT DISTINCT meta->>'experiment' AS experiment FROM "Instance"
    WHERE "datasetId" = ${datasetId} AND meta ? 'experiment' ORDER BY 1`
  return rows.map((r) => r.experiment)
}

/** Its REST endpoint: the clembench import (the same as POST /datasets with `kind=clembench`). */
export const scorekeepingRest: PluginEndpoint[] = [
  {
    method: 'POST',
    path: '/scorekeeping/datasets',
    summary:
      'Import clembench privateshared instances (multipart/form-data: `studyId`, `name`, `file`: the game folder as a zip or an instances file; `resources`: a zip, with an instances file; or `mode=generate` with `experiment`, `count`, `seed`): the dataset import of kind `clembench` (the same as POST /datasets with `kind=clembench`). Runs as a job: poll /datasets/{datasetId}/import',
    op: importClembench,
    source: 'multipart',
    status: 201,
    output: z.object({ id: z.string(), name: z.string(), status: z.literal('importing') }),
    errors: { 404: 'No such study, or not visible to you' },
    idempotent: true,
    docBody: () =>
      z.object({
        studyId: z.string(),
        name: z.string(),
        mode: z.enum(['import', 'generate']).optional(),
        file: z.string().meta({ format: 'binary', description: 'The game folder as a zip, or an instances file.' }),
        resources: z.string().meta({ format: 'binary' }).optional(),
        instancesFile: z.string().optional(),
        experiment: z.string().optional(),
        count: z.number().int().optional(),
        seed: z.number().int().optional(),
      }),
  },
]
