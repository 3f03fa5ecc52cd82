import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { makeStudy, makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

describe('validation failures speak plainly and belong to their fields', () => {
  it('a run set-up with 0 repetitions: "Enter a number of at least 1." on the field, the summary marked as such', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const r = await execute(createRun, researcher, {
      protocol: 'pxp',
      studyId: study.id,
      name: 'zero',
      datasetId: 'none',
      repetitions: '0',
      n: '101',
      generator: { connectionId: 'c' },
      checker: { connectionId: 'c' },
    })
    expect(r).toMatchObject({
      ok: false,
      status: 400,
      fieldsOnly: true,
      fieldErrors: { repetitions: ['Enter a number of at least 1.'], n: ['Enter a number of at most 100.'] },
    })
    expect(JSON.stringify(r)).not.toMatch(/Too small|Too big|expected number/)
  })
})
