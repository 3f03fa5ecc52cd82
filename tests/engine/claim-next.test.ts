import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db, sql } from '@/lib/server/db'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { claimNext, claimNextPicks, claimSeat, myQueue, submitTurn } from '@/lib/server/services/sessions'
import { makeStudy, makeUser, makeUsers } from '../support/fixtures'
import { slotsDataset, toySlotsPlugin } from './toy-slots/plugin'

/**
 * `sessions.claim-next`, on the toy protocol of this folder (N annotator slots per item, each a
 * session with one claimable seat): many people asking at once each get a different slot (FOR UPDATE
 * SKIP LOCKED, no race to lose), a distinct-claimants run never gives one person two slots of an item
 * even when they ask several times at once, the slots come in the work queue's order, "nothing left"
 * is a clean 404, and a lapsed claim is handed out again.
 */
registerPlugin(toySlotsPlugin)

const PEOPLE = 21
let researcher: Actor
let people: Actor[]
let outsider: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  people = [...(await makeUsers(Array.from({ length: PEOPLE }, () => 'annotator' as const)))]
  outsider = await makeUser('annotator')
  studyId = (await makeStudy(researcher, people)).id
})
afterAll(async () => {
  await stopBoss()
})

async function slotsRun(items: number, slots: number, extra: Record<string, unknown> = {}) {
  const datasetId = await slotsDataset(studyId, items)
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'toy-slots',
    name: 'claim next',
    datasetId,
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: slots,
    ...extra,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  return r.data.id
}

/** Who holds each claimable seat of the run now, with its item (instance). */
async function held(runId: string) {
  const { rows } = await sql().query<{ sessionId: string; userId: string | null; item: string }>(
    `SELECT p."sessionId", p."userId", s."instanceId" AS item
     FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
     WHERE s."runId" = $1 AND p.claimable AND p."leaseUntil" > now()`,
    [runId],
  )
  return rows
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Actual Loops': number
  Plans?: PlanNode[]
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

const next = (who: Actor, runId: string) => execute(claimNext, who, { runId })

describe('sessions.claim-next', () => {
  it('20 people at once on 10 items × 2 slots (distinct claimants) get 20 different slots; the 21st gets nothing; lapsed claims come back', async () => {
    const runId = await slotsRun(10, 2, { distinctClaimants: true })
    const twenty = people.slice(0, 20)
    const results = await Promise.all(twenty.map((p) => next(p, runId)))
    for (const r of results) expect(r, JSON.stringify(r)).toMatchObject({ ok: true })
    const claimed = results.map((r) => (r.ok ? r.data.sessionId : ''))
    expect(new Set(claimed).size).toBe(20)
    // In the database: every slot held once, by the person told so, and never two slots of an item by one person.
    const seats = await held(runId)
    expect(seats).toHaveLength(20)
    const holder = new Map(seats.map((s) => [s.sessionId, s.userId]))
    twenty.forEach((p, i) => {
      expect(holder.get(claimed[i] as string)).toBe(p.userId)
    })
    const pairs = seats.map((s) => `${s.userId}/${s.item}`)
    expect(new Set(pairs).size).toBe(pairs.length)
    for (const r of results) {
      if (r.ok) expect(r.data.leaseUntil.getTime()).toBeGreaterThan(Date.now())
    }

    const late = people[20] as Actor
    expect(await next(late, runId)).toMatchObject({ ok: false, status: 404, error: expect.stringMatching(/Nothing/) })

    // Two claims lapse: they are handed out again, once each.
    const [l1, l2] = claimed as [string, string]
    await sql().query(
      `UPDATE "SessionSeat" SET "leaseUntil" = now() - interval '1 second' WHERE "sessionId" = ANY($1)`,
      [[l1, l2]],
    )
    const again = await Promise.all([next(late, runId), next(people[0] as Actor, runId)])
    const got = again.filter((r) => r.ok).map((r) => (r.ok ? r.data.sessionId : ''))
    // Neither holds a slot now (the first person's lapsed): each gets one of the two.
    expect(got).toHaveLength(2)
    for (const id of got) expect([l1, l2]).toContain(id)
    expect(new Set(got).size).toBe(got.length)
    const after = await held(runId)
    expect(new Set(after.map((s) => `${s.userId}/${s.item}`)).size).toBe(after.length)
  })

  it('one person asking many times at once never gets two slots of one item, nor one slot twice', async () => {
    const runId = await slotsRun(10, 2, { distinctClaimants: true })
    const five = people.slice(0, 5)
    const calls = five.flatMap((p) => Array.from({ length: 4 }, () => next(p, runId)))
    const results = await Promise.all(calls)
    for (const r of results) {
      if (!r.ok) expect(r).toMatchObject({ status: 404 })
    }
    const claimed = results.filter((r) => r.ok).map((r) => (r.ok ? r.data.sessionId : ''))
    expect(claimed.length).toBeGreaterThanOrEqual(15)
    expect(new Set(claimed).size).toBe(claimed.length)
    const seats = await held(runId)
    expect(seats).toHaveLength(claimed.length)
    const pairs = seats.map((s) => `${s.userId}/${s.item}`)
    expect(new Set(pairs).size).toBe(pairs.length)
  })

  it('hands out slots in the work queue order, skips a session the person holds, and opens the next after a submit', async () => {
    const runId = await slotsRun(3, 1)
    const me = people[0] as Actor
    const queue = await execute(myQueue, me, { filter: 'claimable', pageSize: 100 })
    if (!queue.ok) throw new Error(queue.error)
    const order = queue.data.items.filter((i) => i.runId === runId).map((i) => i.id)
    expect(order).toHaveLength(3)
    const first = await next(me, runId)
    expect(first).toMatchObject({ ok: true, data: { sessionId: order[0], seat: 'annotator' } })
    const sent = await execute(submitTurn, me, { sessionId: order[0] as string, seq: 1, label: 'yes' })
    expect(sent.ok, JSON.stringify(sent)).toBe(true)
    expect(await next(me, runId)).toMatchObject({ ok: true, data: { sessionId: order[1] } })
    expect(await next(me, runId)).toMatchObject({ ok: true, data: { sessionId: order[2] } })
    expect(await next(me, runId)).toMatchObject({ ok: false, status: 404 })
    const audit = await db.auditLog.count({ where: { action: 'session.claim', resourceId: { in: order } } })
    expect(audit).toBe(3)
  })

  // Each tier of the pick (items in progress, items not begun, the rest) against the queue's one order.
  it.each([
    { fillFirst: 3, distinctClaimants: true },
    { fillFirst: 2, distinctClaimants: true },
    { fillFirst: 1, distinctClaimants: true },
    { fillFirst: 2, distinctClaimants: false },
    { distinctClaimants: false },
  ])('agrees with the work queue at every step of a run with items part done (%o)', async (options) => {
    const runId = await slotsRun(6, 3, options)
    // Others take chosen slots by hand (sessions.claim, not the pick under test): someone holds the
    // first slot without labelling it; item 1 gets its 2nd and 3rd labels (its 1st slot stays free),
    // item 4 one, item 5 all three; so the items in progress are not the first ones, and the hint (complete items to N first) reorders the run.
    const slot = async (position: number, repetition: number) => {
      const { rows } = await sql().query<{ id: string }>(
        `SELECT id FROM "ProtocolSession" WHERE "runId" = $1 AND position = $2 AND repetition = $3`,
        [runId, position, repetition],
      )
      return rows[0]?.id as string
    }
    const take = async (who: number, position: number, repetition: number, label: boolean) => {
      const sessionId = await slot(position, repetition)
      const claimed = await execute(claimSeat, people[who] as Actor, { sessionId, seat: 'annotator' })
      expect(claimed.ok, JSON.stringify(claimed)).toBe(true)
      if (!label) return
      const sent = await execute(submitTurn, people[who] as Actor, { sessionId, seq: 1, label: 'no' })
      expect(sent.ok, JSON.stringify(sent)).toBe(true)
    }
    const first = Math.min(
      ...(
        await sql().query<{ r: number }>(`SELECT repetition AS r FROM "ProtocolSession" WHERE "runId" = $1`, [runId])
      ).rows.map((r) => r.r),
    )
    await take(4, 0, first, false)
    for (const [who, position, rep] of [
      [5, 1, 1],
      [6, 1, 2],
      [7, 4, 0],
      [5, 5, 0],
      [6, 5, 1],
      [7, 5, 2],
    ] as const)
      await take(who, position, first + rep, true)
    // With distinct claimants one free slot of each item not yet full, never two of one; else every free slot.
    const open = await sql().query<{ n: number }>(
      `SELECT count(${options.distinctClaimants ? 'DISTINCT s."instanceId"' : '*'})::int AS n
       FROM "ProtocolSession" s JOIN "SessionSeat" p ON p."sessionId" = s.id
       WHERE s."runId" = $1 AND s.status <> 'done' AND p."userId" IS NULL`,
      [runId],
    )
    const me = people[8] as Actor
    for (let step = 0; ; step++) {
      const queue = await execute(myQueue, me, { filter: 'claimable', pageSize: 100 })
      if (!queue.ok) throw new Error(queue.error)
      const first = queue.data.items.find((i) => i.runId === runId)
      const got = await next(me, runId)
      if (!first) {
        expect(got).toMatchObject({ ok: false, status: 404 })
        expect(step).toBe(open.rows[0]?.n)
        break
      }
      expect(got, `step ${step}`).toMatchObject({ ok: true, data: { sessionId: first.id } })
      if (!got.ok) break
      const sent = await execute(submitTurn, me, { sessionId: got.data.sessionId, seq: 1, label: 'yes' })
      expect(sent.ok, JSON.stringify(sent)).toBe(true)
    }
  })

  it('picks under a row lock that skips locked seats, tier by tier, never scanning the run per seat', async () => {
    const runId = await slotsRun(30, 2, { distinctClaimants: true, fillFirst: 2 })
    const me = people[3] as Actor
    const picks = claimNextPicks({ fillFirst: 2, distinct: true })
    expect(picks).toHaveLength(3) // items in progress, items not begun, the rest
    for (const pick of picks) {
      const { rows } = await sql().query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${pick.text}`,
        pick.values(me.userId, runId),
      )
      const plan = rows[0]?.['QUERY PLAN'][0]
      if (!plan) throw new Error('no plan')
      const all = nodes(plan.Plan)
      expect(all.some((n) => n['Node Type'] === 'LockRows')).toBe(true)
      const perSeatScans = all.filter(
        (n) =>
          n['Node Type'] === 'Seq Scan' &&
          (n['Relation Name'] === 'ProtocolSession' || n['Relation Name'] === 'SessionSeat') &&
          n['Actual Loops'] > 1,
      )
      expect(perSeatScans).toEqual([])
    }
    expect(claimNextPicks({ fillFirst: null, distinct: false })).toHaveLength(1)
  })

  it('a run the person cannot see is a 404; an unknown run too', async () => {
    const runId = await slotsRun(1, 1)
    expect(await next(outsider, runId)).toMatchObject({ ok: false, status: 404 })
    expect(await next(people[0] as Actor, 'no-such-run')).toMatchObject({ ok: false, status: 404 })
    expect(await held(runId)).toHaveLength(0)
  })
})
