import { zipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { makeStudy, makeUser } from '../support/fixtures'
import { importAndWait, useBulkWorkers } from '../support/imports'
import { zipBomb } from '../support/zip-bomb'

// Its own file: the process's peak memory (maxRSS) only ever grows, so nothing else may run first.
useBulkWorkers()
afterAll(() => db.$disconnect())
beforeAll(async () => {
  // Warm up (the first user's password hash, the queue, the import's code) outside the measurements.
  const r = await importBomb(zipSync({ 'xrays/bomb.png': new Uint8Array(1000) }))
  expect(r).toMatchObject({ ok: true, data: { instances: 1, assets: 1 } })
})

const MB = 1024 * 1024
const peakMb = () => process.resourceUsage().maxRSS / 1024

/** Import a RAD file whose one row refers to bomb.png, with the zip that is supposed to hold it. */
async function importBomb(zip: Uint8Array<ArrayBuffer>) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const csv = new File(['case,label,img_path,report\ncase_1,Atelectasis,xrays/bomb.png,A report.\n'], 'rad.csv')
  const r = await importAndWait(researcher, {
    studyId: study.id,
    name: 'bomb',
    kind: 'rad',
    file: csv,
    images: [new File([zip], 'xrays.zip', { type: 'application/zip' })],
  })
  return r
}

/** The outcome, how much the process's peak memory grew meanwhile, and that nothing of it was kept. */
async function refused(zip: Uint8Array<ArrayBuffer>) {
  const before = peakMb()
  const r = await importBomb(zip)
  const grewMb = peakMb() - before
  expect(await db.dataset.count({ where: { name: 'bomb', status: { not: 'ready' } } })).toBe(0)
  return { r, grewMb }
}

describe('zip bombs never inflate past the images limit', () => {
  it('refuses an entry declaring 300 MB (over the 200 MB limit) before inflating it', async () => {
    const zip = zipBomb({ inflatedMb: 300 }) // about 300 KB
    expect(zip.length).toBeLessThan(MB)
    const { r, grewMb } = await refused(zip)
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      error:
        'Nothing was imported: the images are larger than 200 MB in all once unpacked (PARLEY_MAX_IMAGES_MB); import fewer at a time.',
    })
    // Inflating it would have taken 300 MB (and did before the fix).
    expect(grewMb).toBeLessThan(50)
  }, 60_000)

  it('stops an entry whose header lies about its size as soon as it inflates past it', async () => {
    const zip = zipBomb({ inflatedMb: 300, declaredSize: 1000 })
    const { r, grewMb } = await refused(zip)
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      error:
        'Nothing was imported: xrays.zip cannot be unpacked: bomb.png inflates to more than the 1000 bytes its header declares.',
    })
    expect(grewMb).toBeLessThan(50)
  }, 60_000)

  it('counts while inflating an entry that declares no size, and stops at the limit', async () => {
    const zip = zipBomb({ inflatedMb: 300, streamed: true })
    process.env.PARLEY_MAX_IMAGES_MB = '20'
    try {
      const { r, grewMb } = await refused(zip)
      expect(r).toMatchObject({
        ok: false,
        status: 400,
        error:
          'Nothing was imported: the images are larger than 20 MB in all once unpacked (PARLEY_MAX_IMAGES_MB); import fewer at a time.',
      })
      // At most the limit was inflated (and held while the entry was unpacked), never the 300 MB.
      expect(grewMb).toBeLessThan(70)
    } finally {
      delete process.env.PARLEY_MAX_IMAGES_MB
    }
  }, 60_000)
})
