import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { readAsset } from '@/lib/server/services/datasets'
import { addMember, createStudy } from '@/lib/server/services/studies'
import { makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

/** A study created through createStudy by `owner`, with the given members (and study roles) added by them. */
async function studyOf(owner: Actor, members: Array<[Actor, string?]> = []) {
  const created = await execute(createStudy, owner, { name: 'Images study' })
  if (!created.ok) throw new Error(created.error)
  for (const [m, role] of members) {
    const r = await execute(addMember, owner, { studyId: created.data.id, email: m.email, ...(role ? { role } : {}) })
    if (!r.ok) throw new Error(r.error)
  }
  return created.data.id
}

describe('dataset images: experts and annotators see only the images of their own sessions', () => {
  async function radStudy() {
    const owner = await makeUser('researcher')
    const expert = await makeUser('expert')
    const researcherAsExpert = await makeUser('researcher')
    const viewer = await makeUser('viewer')
    const studyId = await studyOf(owner, [[expert], [researcherAsExpert, 'expert'], [viewer]])
    const dataset = await db.dataset.create({
      data: {
        studyId,
        name: 'RAD',
        kind: 'rad',
        source: 'rad.csv',
        instances: {
          create: [
            { index: 0, input: { image: 'mine.png' }, prediction: 'Pneumonia', explanation: 'opacity' },
            { index: 1, input: { image: 'other.png' }, prediction: 'Normal', explanation: 'clear' },
          ],
        },
        assets: {
          create: [
            { name: 'mine.png', mime: 'image/png', bytes: Buffer.from([1, 2, 3]) },
            { name: 'other.png', mime: 'image/png', bytes: Buffer.from([4, 5, 6]) },
          ],
        },
      },
      include: { instances: { orderBy: { index: 'asc' } } },
    })
    const first = dataset.instances[0]
    if (!first) throw new Error('no instance')
    for (const who of [expert, researcherAsExpert]) {
      await db.protocolSession.create({
        data: {
          studyId,
          protocol: 'pxp',
          protocolVersion: '1',
          config: { n: 10, k: 3 },
          task: 'rad',
          instanceId: first.id,
          instance: { input: first.input, prediction: '', explanation: '', datasetId: dataset.id },
          seats: {
            m: { kind: 'proxy', helpers: {}, params: {} },
            h: { kind: 'human', userId: who.userId, claimable: false },
          },
          people: { create: { seat: 'h', userId: who.userId } },
        },
      })
    }
    return { owner, expert, researcherAsExpert, viewer, datasetId: dataset.id }
  }

  it('an expert gets their own session’s image and 404 for another instance’s image in the same study', async () => {
    const { expert, researcherAsExpert, datasetId } = await radStudy()
    for (const who of [expert, researcherAsExpert]) {
      expect((await readAsset(who, datasetId, 'mine.png')).name).toBe('mine.png')
      await expect(readAsset(who, datasetId, 'other.png')).rejects.toMatchObject({ status: 404 })
    }
  })

  it('members who read the study see every image; strangers none', async () => {
    const { owner, viewer, datasetId } = await radStudy()
    for (const who of [owner, viewer]) {
      expect((await readAsset(who, datasetId, 'other.png')).name).toBe('other.png')
    }
    const stranger = await makeUser('researcher')
    await expect(readAsset(stranger, datasetId, 'mine.png')).rejects.toMatchObject({ status: 404 })
    const otherExpert = await makeUser('expert')
    await expect(readAsset(otherExpert, datasetId, 'mine.png')).rejects.toMatchObject({ status: 404 })
  })
})
