import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { awaitDatasetImport, importDataset } from '@/lib/server/services/datasets'
import { createRun } from '@/lib/server/services/runs'
import { measureLoop } from '../support/event-loop'
import { makeStudy, makeUser } from '../support/fixtures'
import { importAndWait, useBulkWorkers } from '../support/imports'
import { fakeConnection, useFakeLlm } from '../support/llm'

// Imports run as jobs worked by this process, as in the web server: the same event loop that must
// keep answering while one runs.
const fake = useFakeLlm()
useBulkWorkers()

/** A DRUG file of `rows` rows (about 80 bytes each); `bad` lines (1-based, the header is 1) get an empty product. */
function drugCsv(rows: number, bad: number[] = []): File {
  const lines = ['output,input,explanation']
  for (let i = 0; i < rows; i++) {
    const product = bad.includes(i + 2) ? '' : `CC${i}C(=O)OC`
    lines.push(`CC${i}.OC,${product},Ester hydrolysis of compound number ${i} in water`)
  }
  return new File([lines.join('\n')], 'big.csv', { type: 'text/csv' })
}

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  return { researcher, study }
}

const withEnv = async <T>(name: string, value: string, fn: () => Promise<T>): Promise<T> => {
  const before = process.env[name]
  process.env[name] = value
  try {
    return await fn()
  } finally {
    if (before === undefined) delete process.env[name]
    else process.env[name] = before
  }
}

describe('large imports run as jobs, and the server stays responsive', () => {
  it('imports 100,000 rows with progress to 100 % while the event loop and a health query stay fast', async () => {
    const { researcher, study } = await world()
    const file = drugCsv(100_000)
    const seen: Array<{ status: string; rowsDone: number; rowsTotal: number | null }> = []
    const report = await measureLoop(async () => {
      const started = await execute(importDataset, researcher, { studyId: study.id, name: 'big', kind: 'drug', file })
      if (!started.ok) throw new Error(started.error)
      const datasetId = started.data.id
      // The request answered at once; the rows are the job's.
      expect(started.data.status).toBe('importing')
      let watching = true
      const watcher = (async () => {
        while (watching) {
          const d = await db.dataset.findUniqueOrThrow({
            where: { id: datasetId },
            select: { status: true, rowsDone: true, rowsTotal: true },
          })
          seen.push(d)
          await sleep(100)
        }
      })()
      const outcome = await execute(awaitDatasetImport, researcher, { datasetId, waitMs: 60_000 })
      watching = false
      await watcher
      return { datasetId, outcome }
    })
    const { datasetId, outcome } = report.result
    console.log(
      `100k rows: loop p99 ${report.p99Ms.toFixed(0)} ms, max ${report.maxMs.toFixed(0)} ms; health ${report.pings} queries, p99 ${report.pingP99Ms.toFixed(0)} ms, max ${report.pingMaxMs.toFixed(0)} ms`,
    )
    expect(outcome).toMatchObject({ ok: true, data: { status: 'ready', instances: 100_000 } })
    // Responsive throughout: no long block (a single one would be the maximum, which a percentile hides).
    expect(report.p99Ms).toBeLessThan(200)
    expect(report.maxMs).toBeLessThan(1000)
    expect(report.pingP99Ms).toBeLessThan(200)
    expect(report.pings).toBeGreaterThan(20)
    // Progress was visible while it ran (rows stored out of the total) and ends at 100 %.
    expect(seen.some((s) => s.status === 'importing' && s.rowsTotal === 100_000 && s.rowsDone < 100_000)).toBe(true)
    expect(await db.dataset.findUniqueOrThrow({ where: { id: datasetId } })).toMatchObject({
      status: 'ready',
      rowsDone: 100_000,
      rowsTotal: 100_000,
    })
    expect(await db.instance.count({ where: { datasetId } })).toBe(100_000)
    const last = await db.instance.findFirstOrThrow({ where: { datasetId, index: 99_999 } })
    expect(last).toMatchObject({ input: { smiles: 'CC99999C(=O)OC' }, prediction: 'CC99999.OC' })
    // The uploaded file is gone once imported.
    expect(await db.datasetUpload.count({ where: { datasetId } })).toBe(0)
  }, 180_000)

  it('all or nothing: one bad row near the end of 100,000 imports nothing and names the line', async () => {
    const { researcher, study } = await world()
    const r = await importAndWait(researcher, {
      studyId: study.id,
      name: 'almost',
      kind: 'drug',
      file: drugCsv(100_000, [99_990]),
    })
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      error: 'Nothing was imported: 1 row has problems. line 99990: input (the product SMILES) is empty',
    })
    expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(0)
    expect(await db.instance.count({ where: { dataset: { studyId: study.id } } })).toBe(0)
  }, 120_000)

  it('a failed import left for the study page keeps its reason and nothing else; experiments refuse it', async () => {
    const { researcher, study } = await world()
    const started = await execute(importDataset, researcher, {
      studyId: study.id,
      name: 'bad',
      kind: 'drug',
      file: drugCsv(3, [3]),
    })
    if (!started.ok) throw new Error(started.error)
    const outcome = await execute(awaitDatasetImport, researcher, { datasetId: started.data.id, waitMs: 30_000 })
    expect(outcome).toMatchObject({ ok: false, status: 400, error: expect.stringContaining('line 3:') })
    const d = await db.dataset.findUniqueOrThrow({
      where: { id: started.data.id },
      include: { _count: { select: { instances: true, assets: true, uploads: true } } },
    })
    expect(d).toMatchObject({ status: 'failed', _count: { instances: 0, assets: 0, uploads: 0 } })
    expect(d.error).toMatch(/^Nothing was imported: 1 row has problems\. line 3:/)
    const conn = await fakeConnection(study.id, fake())
    const experiment = await execute(createRun, researcher, {
      protocol: 'pxp',
      studyId: study.id,
      name: 'on a failed import',
      datasetId: d.id,
      generator: { connectionId: conn.id, model: 'gen' },
      checker: { connectionId: conn.id, model: 'judge' },
    })
    expect(experiment).toMatchObject({
      ok: false,
      status: 400,
      error: '"bad" failed to import; choose a dataset that has been imported.',
    })
  }, 60_000)
})

describe('the row cap (PARLEY_MAX_IMPORT_ROWS)', () => {
  const importRows = (actor: Actor, studyId: string, rows: number) =>
    importAndWait(actor, { studyId, name: `${rows} rows`, kind: 'drug', file: drugCsv(rows) })

  it('takes a file at the cap and refuses one row more, importing nothing', async () => {
    const { researcher, study } = await world()
    await withEnv('PARLEY_MAX_IMPORT_ROWS', '1000', async () => {
      expect(await importRows(researcher, study.id, 1000)).toMatchObject({ ok: true, data: { instances: 1000 } })
      const over = await importRows(researcher, study.id, 1001)
      expect(over).toMatchObject({
        ok: false,
        status: 400,
        error:
          'Nothing was imported: the file has more than 1,000 rows, the most one import takes (PARLEY_MAX_IMPORT_ROWS). Split it, or ask the administrator to raise the limit.',
      })
    })
    expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(1)
  }, 60_000)
})

describe('the upload limit (PARLEY_MAX_UPLOAD_MB)', () => {
  it('answers 413 with the limit above it, storing nothing', async () => {
    const { researcher, study } = await world()
    const r = await withEnv('PARLEY_MAX_UPLOAD_MB', '1', () =>
      execute(importDataset, researcher, {
        studyId: study.id,
        name: 'too big',
        kind: 'drug',
        file: new File([new Uint8Array(1024 * 1024 + 1).fill(65)], 'big.csv'),
      }),
    )
    expect(r).toMatchObject({
      ok: false,
      status: 413,
      error: 'The upload is 1.0 MB; the limit is 1 MB in all (PARLEY_MAX_UPLOAD_MB). Nothing was imported.',
    })
    expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(0)
  })
})
