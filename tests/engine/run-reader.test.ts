import { describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { replayCache } from '@/lib/server/engine/run-reader'
import { makeSession, makeStudy, makeUser } from '../support/fixtures'

/**
 * The replay cache results and exports read sessions through (lib/server/engine/run-reader.ts):
 * each session is read and derived once per version, in the caller's order, bounded.
 */
async function sessions(n: number) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  const out = []
  for (let i = 0; i < n; i++)
    out.push(await makeSession(study.id, { protocol: 'toy', config: {}, task: 'x', instance: { i }, seats: {} }))
  return out
}
const rows = (ids: string[]) =>
  db.protocolSession.findMany({ where: { id: { in: ids } }, select: { id: true, updatedAt: true } })

describe('a replay cache', () => {
  it('derives each session once per version, again only after it changed, in the order asked', async () => {
    const made = await sessions(3)
    const ids = made.map((s) => s.id)
    const derived: string[] = []
    const cache = replayCache((s) => {
      derived.push(s.id)
      return `${(s.instance as { i: number }).i}:${s.messages.length}`
    })
    const order = (await rows(ids)).sort((a, b) => b.id.localeCompare(a.id))
    const first = await cache.of(order)
    expect(first).toEqual(order.map((r) => `${made.findIndex((m) => m.id === r.id)}:0`))
    expect(derived.sort()).toEqual([...ids].sort())
    derived.length = 0
    expect(await cache.of(order)).toEqual(first)
    expect(derived).toEqual([])
    // A message appended to one session moves its version: only that one is read again.
    const one = ids[1] as string
    await db.protocolMessage.create({ data: { sessionId: one, seq: 1, sender: 'a', receiver: 'b', body: {} } })
    await db.protocolSession.update({ where: { id: one }, data: { updatedAt: new Date(Date.now() + 1000) } })
    const again = await cache.of(await rows(ids))
    expect(derived).toEqual([one])
    expect(again).toContain('1:1')
  })

  it('leaves out a session deleted since the caller read it; answers for every session yet holds at most its bound', async () => {
    const made = await sessions(4)
    const ids = made.map((s) => s.id)
    const cache = replayCache((s) => s.id, { max: 2, batch: 1 })
    const listed = await rows(ids)
    await db.protocolSession.delete({ where: { id: ids[0] as string } })
    const got = await cache.of(listed)
    // Three sessions left, a bound of two: the call still answers for all three, in the order asked.
    expect(got).toEqual(listed.map((r) => r.id).filter((id) => id !== ids[0]))
    expect(cache.size).toBe(2)
  })
})
