import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { zipSync } from 'fflate'
import { afterAll, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { getDataset, readAsset } from '@/lib/server/services/datasets'
import { makeStudy, makeUser } from '../support/fixtures'
import { importAndWait, useBulkWorkers } from '../support/imports'

import { describeShared, PXP_DATA as DATA } from '../support/shared'
const file = (name: string, type = 'text/csv') => new File([readFileSync(path.join(DATA, name))], name, { type })

// Imports run as jobs: this process works the queue, as the web server does.
useBulkWorkers()
afterAll(() => db.$disconnect())

describeShared(
  'dataset import into PostgreSQL (the released PXP files)',
  () => {
    it('imports the released RAD train file with its X-rays from a zip, in one piece', async () => {
      const researcher = await makeUser('researcher')
      const study = await makeStudy(researcher)
      const xrays = Object.fromEntries(
        readdirSync(path.join(DATA, 'xrays')).map((n) => [
          `xrays/${n}`,
          new Uint8Array(readFileSync(path.join(DATA, 'xrays', n))),
        ]),
      )
      const zip = new File([zipSync(xrays, { level: 0 })], 'xrays.zip', { type: 'application/zip' })
      const r = await importAndWait(researcher, {
        studyId: study.id,
        name: 'RAD train',
        kind: 'rad',
        file: file('train_xray_data.csv'),
        images: [zip],
      })
      expect(r).toMatchObject({ ok: true, data: { instances: 20 } })
      if (!r.ok) return
      // 20 rows refer to 19 distinct images (two cases share one).
      expect(r.data.assets).toBe(
        new Set(
          (await db.instance.findMany({ where: { datasetId: r.data.id } })).map(
            (i) => (i.input as { image: string }).image,
          ),
        ).size,
      )
      const page = await execute(getDataset, researcher, { datasetId: r.data.id, pageSize: 5 })
      expect(page).toMatchObject({ ok: true, data: { instances: { total: 20, pageCount: 4 } } })
      const first = await db.instance.findFirstOrThrow({ where: { datasetId: r.data.id, index: 0 } })
      const img = await readAsset(researcher, r.data.id, (first.input as { image: string }).image)
      const original = readFileSync(path.join(DATA, 'xrays', (first.input as { image: string }).image))
      expect(Buffer.from(img.bytes).equals(original)).toBe(true)
      expect(img.mime).toBe('image/png')
      // Someone outside the study cannot read the image.
      const stranger = await makeUser('researcher')
      await expect(readAsset(stranger, r.data.id, img.name)).rejects.toMatchObject({ status: 404 })
    })

    it('imports the released DRUG file (95 rows)', async () => {
      const researcher = await makeUser('researcher')
      const study = await makeStudy(researcher)
      const r = await importAndWait(researcher, {
        studyId: study.id,
        name: 'Retro',
        kind: 'drug',
        file: file('retro.csv'),
      })
      expect(r).toMatchObject({ ok: true, data: { instances: 95, assets: 0 } })
    })

    it('a RAD file without its images, or with bad rows, imports nothing and says which lines', async () => {
      const researcher = await makeUser('researcher')
      const study = await makeStudy(researcher)
      const before = await db.dataset.count({ where: { studyId: study.id } })
      const noImages = await importAndWait(researcher, {
        studyId: study.id,
        name: 'x',
        kind: 'rad',
        file: file('val_xray_data.csv'),
      })
      expect(noImages).toMatchObject({ ok: false, status: 400 })
      if (!noImages.ok)
        expect(noImages.error).toMatch(
          /Nothing was imported: 27 rows have problems\. line 2: image ".*" is not in the uploaded images/,
        )
      const bad = new File(['output,input,explanation\nCCO,CC O,why\n,CCC,\n'], 'bad.csv')
      const r = await importAndWait(researcher, { studyId: study.id, name: 'bad', kind: 'drug', file: bad })
      expect(r).toMatchObject({ ok: false, status: 400 })
      if (!r.ok)
        expect(r.error).toBe(
          'Nothing was imported: 2 rows have problems. line 2: input SMILES contains spaces | line 3: output (the reactant SMILES) is empty; explanation is empty',
        )
      const notZip = await importAndWait(researcher, {
        studyId: study.id,
        name: 'x',
        kind: 'rad',
        file: file('train_xray_data.csv'),
        images: [new File(['not a zip'], 'x.zip')],
      })
      expect(notZip).toMatchObject({ ok: false, status: 400, error: 'x.zip is not a readable zip archive.' })
      expect(await db.dataset.count({ where: { studyId: study.id } })).toBe(before)
    })
  },
  'datasets/pxp-interact',
)
