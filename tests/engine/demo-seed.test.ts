import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { demoSeed } from '@/lib/server/seed'
import { createRun } from '@/lib/server/services/runs'
import { makeStudy, makeUser } from '../support/fixtures'
import { slotsDataset, toySlotsPlugin } from './toy-slots/plugin'

/**
 * The demo seed's `actAs` (lib/server/seed.ts), on the toy-slots protocol of this folder: a demo
 * person's turn goes through the claim and submit services a browser uses, so their checks hold for a
 * seed as for a person: the turn is the person's (author, audit), a run with distinct claimants never
 * gives one person two slots of an item, a seat someone else holds is refused with nothing written, a
 * viewer never takes part, and input the plugin refuses is refused.
 */
registerPlugin(toySlotsPlugin)

let researcher: Actor
let a: Actor
let b: Actor
let viewer: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('annotator')
  b = await makeUser('annotator')
  viewer = await makeUser('viewer')
  studyId = (await makeStudy(researcher, [a, b, viewer])).id
})
afterAll(async () => {
  await stopBoss()
})

describe('DemoSeed.actAs: a demo person acts through the browser’s services', () => {
  it('claims and sends the turn as the person; distinct claimants, held seats, viewers and bad input are refused', async () => {
    const r = await execute(createRun, researcher, {
      studyId,
      protocol: 'toy-slots',
      name: 'labels',
      datasetId: await slotsDataset(studyId, 2),
      seats: { annotator: { kind: 'human', claimable: true } },
      repetitions: 2,
      distinctClaimants: true,
      start: true,
    })
    if (!r.ok) throw new Error(r.error)
    const rows = await db.protocolSession.findMany({
      where: { runId: r.data.id },
      orderBy: [{ position: 'asc' }, { repetition: 'asc' }],
    })
    const [s1, s2, s3] = rows.map((x) => x.id) as [string, string, string]
    const seed = demoSeed(studyId, researcher, { 'a@x': a, 'b@x': b, 'v@x': viewer })

    expect(await seed.actAs('a@x', s1, { label: 'yes' })).toEqual({ seq: 1, done: expect.any(String) })
    const m = await db.protocolMessage.findFirstOrThrow({ where: { sessionId: s1 } })
    expect(m.authorUserId).toBe(a.userId)
    expect(
      await db.auditLog.count({ where: { resourceId: s1, action: { in: ['session.claim', 'session.turn'] } } }),
    ).toBe(2)
    // The second slot of the same item: a has worked on the item, so the run refuses them.
    await expect(seed.actAs('a@x', s2, { label: 'no' })).rejects.toThrow(/different person/)
    // b claims s3, but 'maybe' is no label of the plugin's input: refused, nothing written, b holds the seat.
    await expect(seed.actAs('b@x', s3, { label: 'maybe' })).rejects.toThrow()
    expect(await db.protocolMessage.count({ where: { sessionId: s3 } })).toBe(0)
    // So a, who may take part, finds the seat taken.
    await expect(seed.actAs('a@x', s3, { label: 'no' })).rejects.toThrow(/took this seat|cannot be claimed/)
    await expect(seed.actAs('v@x', s2, { label: 'no' })).rejects.toThrow(/permission/)
    await expect(seed.actAs('nobody@x', s2, { label: 'no' })).rejects.toThrow(/no demo person/)
    // b, who holds s3 already, sends without claiming again.
    await seed.actAs('b@x', s3, { label: 'no' })
    expect(await db.protocolMessage.count({ where: { sessionId: s3 } })).toBe(1)
    expect(await db.protocolMessage.count({ where: { sessionId: s2 } })).toBe(0)
  })
})
