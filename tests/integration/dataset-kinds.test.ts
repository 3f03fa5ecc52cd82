import { strToU8, zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import type { DatasetItem, DatasetKind } from '@/lib/server/engine/datasets'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { execute } from '@/lib/server/operation'
import { demoGameFiles } from '@/protocols/scorekeeping/server/demo'
import { clembenchExperiments, importClembench } from '@/protocols/scorekeeping/server/import'
import { type DatasetImportJob, runDatasetImport } from '@/lib/server/services/dataset-import'
import { datasetKinds, uploadFormKinds } from '@/lib/server/services/dataset-kinds'
import { awaitDatasetImport, importDataset, startDatasetImport } from '@/lib/server/services/datasets'
import { toyPlugin } from '../engine/toy/plugin'
import { makeStudy, makeUser } from '../support/fixtures'

/**
 * Dataset kinds are the plugins': the request finds the kind among them (an unknown one is refused,
 * naming those there are), and the one import job streams every kind's files through its parser,
 * all or nothing, scorekeeping's clembench games included. This file works no queue: it runs each
 * import's job itself, as any worker would, so it can look at the dataset before and after.
 */

/** A kind no built-in protocol has: one instance per line of a text file; a line "bad" is a problem. */
const lines: DatasetKind = {
  label: 'LINES',
  description: 'One instance per line',
  accepts: '.txt',
  async *parse({ data }) {
    let text = ''
    for await (const piece of data.read()) text += Buffer.from(piece).toString('utf8')
    for (const [i, line] of text.split('\n').entries()) {
      if (!line) continue
      const item: DatasetItem =
        line === 'bad'
          ? { line: i + 1, problem: 'this line is bad' }
          : { line: i + 1, row: { index: i, input: { line }, prediction: line, explanation: '', meta: {} } }
      yield item
    }
  },
}
registerPlugin({ ...toyPlugin, ops: async () => ({ datasets: { 'toy-lines': lines } }) })

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  return { researcher, study }
}

const gameZip = (games: number) =>
  zipSync(Object.fromEntries(Object.entries(demoGameFiles(games)).map(([k, v]) => [k, strToU8(v)])))

/** The job an import queued (this file runs it itself). */
async function queuedJob(datasetId: string): Promise<DatasetImportJob> {
  const rows = await db.$queryRaw<Array<{ data: DatasetImportJob }>>`
    SELECT data FROM pgboss.job WHERE name = 'dataset-import' AND data->>'datasetId' = ${datasetId}`
  if (!rows[0]) throw new Error(`no import job for ${datasetId}`)
  return rows[0].data
}

const nothingLeft = async (datasetId: string) => ({
  instances: await db.instance.count({ where: { datasetId } }),
  uploads: await db.datasetUpload.count({ where: { datasetId } }),
})

describe('dataset kinds come from the plugins', () => {
  it('an unknown kind is refused at the request, naming the kinds there are, and nothing is stored', async () => {
    const { researcher, study } = await world()
    const before = await db.dataset.count({ where: { studyId: study.id } })
    const r = await execute(importDataset, researcher, {
      studyId: study.id,
      name: 'x',
      kind: 'xrays',
      file: new File(['a,b\n1,2\n'], 'x.csv'),
    })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.status).toBe(400)
    expect(r.error).toMatch(/^Unknown dataset kind "xrays": choose one of .*\brad\b.*\bcases\b.*\bclembench\b/)
    expect(r.fieldErrors?.kind?.[0]).toMatch(/toy-lines/)
    expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(before)
  })

  it('lists every plugin’s kinds once; the upload form offers those without a form of their own', async () => {
    const kinds = (await datasetKinds()).map((k) => `${k.protocol}:${k.kind}`)
    for (const k of ['pxp:rad', 'pxp:drug', 'pxp:generic', 'evince:cases', 'scorekeeping:clembench', 'toy:toy-lines'])
      expect(kinds).toContain(k)
    const offered = (await uploadFormKinds()).map((k) => k.kind)
    expect(offered).toContain('toy-lines')
    expect(offered).not.toContain('clembench') // scorekeeping imports it with its own form
    expect((await uploadFormKinds()).find((k) => k.kind === 'rad')?.attachments.map((a) => a.field)).toEqual(['images'])
  })

  it("a plugin's own kind imports through the one job; a bad line names itself and leaves nothing", async () => {
    const { researcher, study } = await world()
    const ok = await startDatasetImport(researcher, {
      studyId: study.id,
      name: 'lines',
      kind: 'toy-lines',
      file: new File(['one\ntwo\nthree\n'], 'l.txt'),
    })
    await runDatasetImport(ok.job)
    const done = await execute(awaitDatasetImport, researcher, { datasetId: ok.id })
    expect(done.ok && done.data).toMatchObject({ status: 'ready', instances: 3, rowsDone: 3, rowsTotal: 3 })
    expect(
      (await db.instance.findMany({ where: { datasetId: ok.id }, orderBy: { index: 'asc' } })).map((i) => i.prediction),
    ).toEqual(['one', 'two', 'three'])

    const bad = await startDatasetImport(researcher, {
      studyId: study.id,
      name: 'bad lines',
      kind: 'toy-lines',
      file: new File(['one\nbad\nthree\n'], 'l.txt'),
    })
    await runDatasetImport(bad.job)
    const failed = await db.dataset.findUniqueOrThrow({ where: { id: bad.id } })
    expect(failed.status).toBe('failed')
    expect(failed.error).toBe('Nothing was imported: 1 row has problems. line 2: this line is bad')
    expect(await nothingLeft(bad.id)).toEqual({ instances: 0, uploads: 0 })
  })
})

describe("scorekeeping's clembench import runs on the import job", () => {
  it('answers at once with the dataset importing; the job makes it ready with its counts and drops the upload', async () => {
    const { researcher, study } = await world()
    const r = await execute(importClembench, researcher, {
      studyId: study.id,
      name: 'games',
      file: new File([Buffer.from(gameZip(3))], 'game.zip'),
    })
    if (!r.ok) throw new Error(r.error)
    expect(r.data).toMatchObject({ status: 'importing' })
    // Before a worker takes it: stored, importing, its progress at zero, no instance yet.
    const waiting = await execute(awaitDatasetImport, researcher, { datasetId: r.data.id })
    expect(waiting.ok && waiting.data).toMatchObject({ status: 'importing', rowsDone: 0, instances: 0 })
    expect(await nothingLeft(r.data.id)).toEqual({ instances: 0, uploads: 1 })

    await runDatasetImport(await queuedJob(r.data.id))
    const done = await execute(awaitDatasetImport, researcher, { datasetId: r.data.id })
    expect(done.ok && done.data).toMatchObject({ status: 'ready', instances: 3, rowsDone: 3, rowsTotal: 3 })
    const ds = await db.dataset.findUniqueOrThrow({ where: { id: r.data.id } })
    expect(ds.kind).toBe('clembench')
    expect(await nothingLeft(r.data.id)).toEqual({ instances: 3, uploads: 0 })
    expect((await clembenchExperiments(r.data.id)).length).toBeGreaterThan(0)
    const audit = await db.auditLog.findFirst({ where: { resourceId: r.data.id, action: 'dataset.import' } })
    expect(audit?.after).toMatchObject({ kind: 'clembench', instances: 3 })
  })

  it('a bad file fails on the job with its reason and leaves nothing', async () => {
    const { researcher, study } = await world()
    // The game folder without its instance file.
    const files = Object.fromEntries(
      Object.entries(demoGameFiles(2))
        .filter(([k]) => !k.endsWith('instances.json'))
        .map(([k, v]) => [k, strToU8(v)]),
    )
    const r = await execute(importClembench, researcher, {
      studyId: study.id,
      name: 'no instances',
      file: new File([Buffer.from(zipSync(files))], 'game.zip'),
    })
    if (!r.ok) throw new Error(r.error)
    await runDatasetImport(await queuedJob(r.data.id))
    const ds = await db.dataset.findUniqueOrThrow({ where: { id: r.data.id } })
    expect(ds.status).toBe('failed')
    expect(ds.error).toBe('Nothing was imported: The zip has no in/instances.json.')
    expect(await nothingLeft(r.data.id)).toEqual({ instances: 0, uploads: 0 })
    const answer = await execute(awaitDatasetImport, researcher, { datasetId: r.data.id })
    expect(answer.ok).toBe(false)
  })

  it('takes the row cap of every import (PARLEY_MAX_IMPORT_ROWS)', async () => {
    const { researcher, study } = await world()
    const r = await execute(importClembench, researcher, {
      studyId: study.id,
      name: 'too many',
      file: new File([Buffer.from(gameZip(3))], 'game.zip'),
    })
    if (!r.ok) throw new Error(r.error)
    const before = process.env.PARLEY_MAX_IMPORT_ROWS
    process.env.PARLEY_MAX_IMPORT_ROWS = '2'
    try {
      await runDatasetImport(await queuedJob(r.data.id))
    } finally {
      if (before === undefined) delete process.env.PARLEY_MAX_IMPORT_ROWS
      else process.env.PARLEY_MAX_IMPORT_ROWS = before
    }
    const ds = await db.dataset.findUniqueOrThrow({ where: { id: r.data.id } })
    expect(ds.status).toBe('failed')
    expect(ds.error).toMatch(/more than 2 rows/)
    expect(await nothingLeft(r.data.id)).toEqual({ instances: 0, uploads: 0 })
  })

  it("checks the kind's options at the request: generating needs an experiment, and nothing is stored", async () => {
    const { researcher, study } = await world()
    const r = await execute(importClembench, researcher, {
      studyId: study.id,
      name: 'generated',
      mode: 'generate',
      file: new File([Buffer.from(gameZip(1))], 'game.zip'),
    })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.status).toBe(400)
    expect(r.fieldErrors?.experiment).toEqual(['Name the experiment to generate instances for.'])
    expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(0)
  })
})
