import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { claimSeat, myQueue, nextSessionFor, submitTurn } from '@/lib/server/services/sessions'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * "The next item opens as soon as one is submitted": after a label, with nothing else held, the
 * session page offers the next claimable slot of the same run (in the queue's fillFirst order), and a
 * run with distinct claimants never offers a second slot of an item the person labelled.
 */
let researcher: Actor
let a: Actor
let b: Actor
let outsider: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('expert')
  b = await makeUser('annotator')
  outsider = await makeUser('expert')
  studyId = (await makeStudy(researcher, [a, b])).id
})
afterAll(async () => {
  await stopBoss()
})

async function project(items: number, slots: number, distinctClaimants: boolean) {
  const datasetId = await labellingDataset(studyId, items, `items ${Math.random()}`)
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'labelling',
    name: 'next item',
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: slots,
    distinctClaimants,
    fillFirst: distinctClaimants ? slots : undefined,
    start: true,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const rows = await db.protocolSession.findMany({
    where: { runId: r.data.id },
    orderBy: [{ position: 'asc' }, { repetition: 'asc' }],
    select: { id: true, position: true, repetition: true },
  })
  return { runId: r.data.id, rows }
}

/** The first three sessions' ids, in the order given (position, then slot). */
function three3(rows: Array<{ id: string }>): [string, string, string] {
  const [x, y, z] = rows
  if (!x || !y || !z) throw new Error(`expected at least 3 sessions, got ${rows.length}`)
  return [x.id, y.id, z.id]
}

async function labelOne(who: Actor, sessionId: string) {
  expect((await execute(claimSeat, who, { sessionId, seat: 'annotator' })).ok).toBe(true)
  const sent = await execute(submitTurn, who, { sessionId, seq: 1, answers: { O: '1' } })
  expect(sent.ok, JSON.stringify(sent)).toBe(true)
}

describe('Next session offers the next claimable item of the run', () => {
  it('a person labels item 1 of a 3-item claimable run and is offered item 2, then item 3, then nothing', async () => {
    const { rows } = await project(3, 1, false)
    const [one, two, three] = three3(rows)
    await labelOne(a, one)
    expect(await nextSessionFor(a, one)).toEqual({ id: two, claim: true })
    await labelOne(a, two)
    expect(await nextSessionFor(a, two)).toEqual({ id: three, claim: true })
    await labelOne(a, three)
    expect(await nextSessionFor(a, three)).toBeNull()
  })

  it('a session the person holds and is awaited in comes before any claimable one', async () => {
    const { rows } = await project(3, 1, false)
    const [first, , last] = three3(rows)
    expect((await execute(claimSeat, a, { sessionId: last, seat: 'annotator' })).ok).toBe(true)
    await labelOne(a, first)
    // The step worker (not running here) would put the claimed session to the annotator's turn.
    await db.protocolSession.update({ where: { id: last }, data: { status: 'awaiting', awaitingSeat: 'annotator' } })
    expect(await nextSessionFor(a, first)).toEqual({ id: last, claim: false })
    // Label it too, so the person holds nothing awaiting them in the tests after this one.
    expect((await execute(submitTurn, a, { sessionId: last, seq: 1, answers: { O: '0' } })).ok).toBe(true)
  })

  it('the next item of the run comes before a session awaiting the person in another run, which comes once the run has none left', async () => {
    const { rows } = await project(3, 1, false)
    const [one, two, three] = three3(rows)
    const other = (await project(1, 1, false)).rows[0]?.id as string
    expect((await execute(claimSeat, a, { sessionId: other, seat: 'annotator' })).ok).toBe(true)
    await db.protocolSession.update({ where: { id: other }, data: { status: 'awaiting', awaitingSeat: 'annotator' } })
    await labelOne(a, one)
    expect(await nextSessionFor(a, one)).toEqual({ id: two, claim: true })
    await labelOne(a, two)
    await labelOne(a, three)
    expect(await nextSessionFor(a, three)).toEqual({ id: other, claim: false })
    // Without a session just left (the work queue's "Next session"), the one awaiting comes first.
    expect(await nextSessionFor(a)).toEqual({ id: other, claim: false })
    expect((await execute(submitTurn, a, { sessionId: other, seq: 1, answers: { O: '0' } })).ok).toBe(true)
  })

  it('with distinct claimants, never a second slot of an item labelled: one slot of each item, then nothing', async () => {
    const { rows } = await project(3, 2, true)
    const item = (id: string) => rows.find((r) => r.id === id)?.position
    const [first] = three3(rows)
    await labelOne(a, first)
    const seen = new Set([item(first)])
    let after = first
    for (;;) {
      const next = await nextSessionFor(a, after)
      if (!next) break
      expect(next.claim).toBe(true)
      // Never the other slot of an item already labelled by this person.
      expect(seen.has(item(next.id))).toBe(false)
      seen.add(item(next.id))
      await labelOne(a, next.id)
      after = next.id
    }
    // One slot of each of the 3 items, and nothing more.
    expect(seen.size).toBe(3)
    // My work agrees: it offers none of the run's other slots (each is of an item this person labelled),
    // while another member of the study is offered all three (a claim button that can only fail is a bug).
    const offered = async (who: Actor) => {
      const q = await execute(myQueue, who, { filter: 'claimable', page: 1, pageSize: 100 })
      if (!q.ok) throw new Error(q.error)
      const ids = new Set(rows.map((r) => r.id))
      return q.data.items.filter((i: { id: string }) => ids.has(i.id)).length
    }
    expect(await offered(a)).toBe(0)
    expect(await offered(b)).toBe(3)
    expect(
      await db.protocolMessage.count({ where: { authorUserId: a.userId, sessionId: { in: rows.map((r) => r.id) } } }),
    ).toBe(3)
  })

  it('someone who does not take part in the study is offered nothing to claim', async () => {
    const { rows } = await project(2, 1, false)
    expect(await nextSessionFor(outsider, rows[0]?.id ?? '')).toBeNull()
  })
})
