import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { getStudy } from '@/lib/server/services/studies'
import { makeStudy, makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

async function run(studyId: string, protocol: string, name: string) {
  await db.run.create({
    data: { studyId, name, protocol, task: 'x', datasetId: 'none', config: {}, seats: {}, repetitions: 1 },
  })
}

describe('the study page names the protocols its runs use', () => {
  it('lists each protocol of the study’s runs with its count, most runs first; none without runs', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const empty = await execute(getStudy, researcher, { studyId: study.id })
    expect(empty).toMatchObject({ ok: true, data: { protocol: null, runProtocols: [] } })

    await run(study.id, 'evince', 'debate 1')
    await run(study.id, 'pxp', 'pxp 1')
    await run(study.id, 'pxp', 'pxp 2')
    const r = await execute(getStudy, researcher, { studyId: study.id })
    if (!r.ok) throw new Error(r.error)
    expect(r.data.runProtocols).toEqual([
      { protocol: 'pxp', label: 'PXP / INTERACT', runs: 2 },
      { protocol: 'evince', label: expect.stringMatching(/EVINCE/), runs: 1 },
    ])
    // Another study's runs are not counted.
    const other = await makeStudy(researcher)
    await run(other.id, 'scorekeeping', 'game')
    const again = await execute(getStudy, researcher, { studyId: study.id })
    expect(again.ok && again.data.runProtocols.map((p) => p.protocol)).toEqual(['pxp', 'evince'])
  })
})
