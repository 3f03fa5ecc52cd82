import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db, sql } from '@/lib/server/db'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun, getRun } from '@/lib/server/services/runs'
import {
  claimSeat,
  getSession,
  myQueue,
  releaseSeat,
  renewLease,
  saveDraft,
  submitTurn,
} from '@/lib/server/services/sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { slotsDataset, toySlotsPlugin } from './toy-slots/plugin'

/**
 * Seat leases, on a toy protocol of this folder only (tests/engine/toy-slots: N annotator slots per
 * item, each a session with one claimable seat): a claim is a lease that lapses unseen (decided when
 * read, no reaper) and is offered again, renewed by a heartbeat, given back by a release; a turn
 * after the claim lapsed or was taken is a clean 409 with nothing written; two claims of one seat
 * give one winner; a run with distinctClaimants never gives one person two slots of an item; a
 * run's fillFirst orders the queue; a seat named for a person stays theirs.
 */
registerPlugin(toySlotsPlugin)

let researcher: Actor
let a: Actor
let b: Actor
let c: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('expert')
  b = await makeUser('expert')
  c = await makeUser('expert')
  studyId = (await makeStudy(researcher, [a, b, c])).id
})
afterEach(() => {
  delete process.env.PARLEY_SEAT_LEASE_SECONDS
})
afterAll(async () => {
  await stopBoss()
})

/** A toy-slots run of `items` items × `slots` slots; its sessions by item (position), then slot. */
async function slotsRun(
  items: number,
  slots: number,
  { annotator, ...extra }: { annotator?: string } & Record<string, unknown> = {},
) {
  const datasetId = await slotsDataset(studyId, items)
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'toy-slots',
    name: 'labels',
    datasetId,
    // Each slot is a repetition; the annotator seat is claimable unless a person is named for it.
    seats: { annotator: annotator ? { kind: 'human', userId: annotator } : { kind: 'human', claimable: true } },
    repetitions: slots,
    ...extra,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const sessions = await db.protocolSession.findMany({
    where: { runId: r.data.id },
    orderBy: [{ position: 'asc' }, { repetition: 'asc' }],
    select: { id: true, position: true, repetition: true },
  })
  return { runId: r.data.id, sessions: sessions.map((s) => s.id), rows: sessions }
}

const claim = (who: Actor, sessionId: string) => execute(claimSeat, who, { sessionId, seat: 'annotator' })
const label = (who: Actor, sessionId: string) => execute(submitTurn, who, { sessionId, seq: 1, label: 'yes' })
const messages = (sessionId: string) => db.protocolMessage.count({ where: { sessionId } })
const seatRow = (sessionId: string) =>
  db.sessionSeat.findUniqueOrThrow({ where: { sessionId_seat: { sessionId, seat: 'annotator' } } })
/** Time passes for a claim: its lease ran out `ago` ms before now. */
const lapse = (sessionId: string, ago = 1000) =>
  sql().query(`UPDATE "SessionSeat" SET "leaseUntil" = now() - make_interval(secs => $2) WHERE "sessionId" = $1`, [
    sessionId,
    ago / 1000,
  ])
async function offeredTo(who: Actor, runId: string): Promise<string[]> {
  const q = await execute(myQueue, who, { filter: 'claimable', pageSize: 100 })
  if (!q.ok) throw new Error(q.error)
  return q.data.items.filter((i) => i.runId === runId).map((i) => i.id)
}

describe('a claim is a lease', () => {
  it('lapses when not renewed: the seat is offered again, read as free with no reaper, and a late turn is a 409 with nothing written', async () => {
    process.env.PARLEY_SEAT_LEASE_SECONDS = '1'
    const { runId, sessions } = await slotsRun(1, 2)
    const [s1] = sessions as [string]
    const claimed = await claim(a, s1)
    expect(claimed.ok).toBe(true)
    const until = claimed.ok ? claimed.data.leaseUntil.getTime() : 0
    expect(until - Date.now()).toBeLessThanOrEqual(1000)
    // Held: not offered to others, and a's page is a's turn.
    expect(await offeredTo(b, runId)).not.toContain(s1)
    const page = await execute(getSession, a, { sessionId: s1 })
    expect(page.ok && page.data.yourTurn).toBe(true)
    expect(page.ok && page.data.lease?.seconds).toBe(1)
    expect(await claim(b, s1)).toMatchObject({ ok: false, status: 409 })

    await new Promise((r) => setTimeout(r, 1200))
    // Nothing reaped it: the row still names a, yet every reader counts the seat free.
    expect((await seatRow(s1)).userId).toBe(a.userId)
    expect(await offeredTo(b, runId)).toContain(s1)
    expect(await offeredTo(a, runId)).toContain(s1)
    const after = await execute(getSession, a, { sessionId: s1 })
    expect(after.ok && after.data).toMatchObject({
      yourTurn: false,
      mySeats: [],
      claimableSeats: ['annotator'],
      lease: null,
    })
    // The run's page shows the seat open again.
    const run = await execute(getRun, researcher, { runId })
    const row = run.ok ? run.data.sessions.items.find((x) => x.id === s1) : undefined
    expect(row?.people).toEqual([{ seat: 'annotator', claimable: true, user: null }])
    const late = await label(a, s1)
    expect(late).toMatchObject({ ok: false, status: 409 })
    expect(!late.ok && late.error).toMatch(/lapsed/)
    expect(await messages(s1)).toBe(0)
  })

  it('a heartbeat extends the lease only while it holds', async () => {
    process.env.PARLEY_SEAT_LEASE_SECONDS = '2'
    const { sessions } = await slotsRun(1, 2)
    const [s1, s2] = sessions as [string, string]
    expect((await claim(a, s1)).ok).toBe(true)
    const first = (await seatRow(s1)).leaseUntil?.getTime() ?? 0
    await new Promise((r) => setTimeout(r, 1200))
    const renewed = await execute(renewLease, a, { sessionId: s1 })
    expect(renewed).toMatchObject({ ok: true, data: { seat: 'annotator', seconds: 2 } })
    const second = (await seatRow(s1)).leaseUntil?.getTime() ?? 0
    expect(second).toBeGreaterThan(first + 1000)
    // Past the first lease's end, the renewed claim still holds.
    await new Promise((r) => setTimeout(r, 1200))
    expect(Date.now()).toBeGreaterThan(first)
    expect(await claim(b, s1)).toMatchObject({ ok: false, status: 409 })
    // Someone who does not hold the seat renews nothing (b is offered the session: a 409, not a 404).
    expect(await execute(renewLease, b, { sessionId: s1 })).toMatchObject({ ok: false, status: 409 })
    expect((await seatRow(s1)).leaseUntil?.getTime()).toBe(second)
    // A lapsed claim is not renewed: claim it again.
    expect((await claim(a, s2)).ok).toBe(true)
    await lapse(s2)
    const lapsed = await execute(renewLease, a, { sessionId: s2 })
    expect(lapsed).toMatchObject({ ok: false, status: 409 })
    expect(!lapsed.ok && lapsed.error).toMatch(/lapsed/)
    expect((await seatRow(s2)).leaseUntil?.getTime()).toBeLessThan(Date.now())
    expect((await claim(a, s2)).ok).toBe(true)
    expect((await seatRow(s2)).leaseUntil?.getTime()).toBeGreaterThan(Date.now())
  })

  it('is the one record of who sits where: a claim writes SessionSeat, not the session seats JSON', async () => {
    const { sessions } = await slotsRun(1, 1)
    const [s1] = sessions as [string]
    expect((await claim(a, s1)).ok).toBe(true)
    const s = await db.protocolSession.findUniqueOrThrow({ where: { id: s1 }, select: { seats: true } })
    expect(s.seats).toEqual({ annotator: { kind: 'human', claimable: true } })
    expect(await seatRow(s1)).toMatchObject({ userId: a.userId, claimable: true })
  })
})

describe('release', () => {
  it('gives the seat back at once (audited); the giver sends nothing more, and cannot give it back twice', async () => {
    const { runId, sessions } = await slotsRun(1, 1)
    const [s1] = sessions as [string]
    expect((await claim(a, s1)).ok).toBe(true)
    expect(await offeredTo(b, runId)).not.toContain(s1)
    expect(await execute(releaseSeat, a, { sessionId: s1 })).toMatchObject({ ok: true, data: { seat: 'annotator' } })
    expect(await seatRow(s1)).toMatchObject({ userId: null, claimedAt: null, leaseUntil: null })
    expect(
      await db.auditLog.count({ where: { action: 'session.release', resourceId: s1, actorUserId: a.userId } }),
    ).toBe(1)
    expect(await offeredTo(b, runId)).toContain(s1)
    const late = await label(a, s1)
    expect(late).toMatchObject({ ok: false, status: 409 })
    expect(!late.ok && late.error).toMatch(/no longer hold/)
    expect(await execute(releaseSeat, a, { sessionId: s1 })).toMatchObject({ ok: false, status: 409 })
    expect(await messages(s1)).toBe(0)
    // The next person takes it and labels it.
    expect((await claim(b, s1)).ok).toBe(true)
    expect((await label(b, s1)).ok).toBe(true)
  })

  it('a seat named for a person stays theirs: no lease, no release, not offered, their turn is taken', async () => {
    const { runId, sessions } = await slotsRun(1, 1, { annotator: a.userId })
    const [s1] = sessions as [string]
    expect(await seatRow(s1)).toMatchObject({ userId: a.userId, claimable: false, leaseUntil: null })
    const page = await execute(getSession, a, { sessionId: s1 })
    expect(page.ok && page.data).toMatchObject({ yourTurn: true, lease: null })
    expect(await offeredTo(b, runId)).toEqual([])
    expect(await execute(renewLease, a, { sessionId: s1 })).toMatchObject({ ok: true, data: { leaseUntil: null } })
    const released = await execute(releaseSeat, a, { sessionId: s1 })
    expect(released).toMatchObject({ ok: false, status: 409 })
    expect(!released.ok && released.error).toMatch(/named for you/)
    expect((await seatRow(s1)).userId).toBe(a.userId)
    expect(await claim(b, s1)).toMatchObject({ ok: false, status: 404 })
    expect((await label(a, s1)).ok).toBe(true)
  })
})

describe('races', () => {
  it('the lease lapses, a second person claims, the first one submits: 409 and nothing written', async () => {
    const { sessions } = await slotsRun(1, 1)
    const [s1] = sessions as [string]
    expect((await claim(a, s1)).ok).toBe(true)
    await lapse(s1)
    expect((await claim(b, s1)).ok).toBe(true)
    const late = await label(a, s1)
    expect(late).toMatchObject({ ok: false, status: 409 })
    expect(!late.ok && late.error).toMatch(/someone else took it/)
    expect(await messages(s1)).toBe(0)
    expect(await db.auditLog.count({ where: { action: 'session.turn', resourceId: s1 } })).toBe(0)
    expect((await label(b, s1)).ok).toBe(true)
    const m = await db.protocolMessage.findFirstOrThrow({ where: { sessionId: s1 } })
    expect(m.authorUserId).toBe(b.userId)
  })

  it('concurrent claims of one seat: exactly one wins', async () => {
    const people = [a, b, c, await makeUser('expert'), await makeUser('expert')]
    for (const p of people.slice(3))
      await db.studyMember.create({ data: { studyId, userId: p.userId, role: 'expert' } })
    const { sessions } = await slotsRun(4, 1)
    for (const s of sessions) {
      const results = await Promise.all(people.map((p) => claim(p, s)))
      expect(results.filter((r) => r.ok)).toHaveLength(1)
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.status === 409)).toBe(true)
      const winner = people[results.findIndex((r) => r.ok)]
      expect((await seatRow(s)).userId).toBe(winner?.userId)
    }
  })

  it('a turn racing a claim as the lease runs out: never both, and what is written is the holder’s', async () => {
    process.env.PARLEY_SEAT_LEASE_SECONDS = '1'
    const { sessions } = await slotsRun(12, 1)
    for (const s of sessions) {
      expect((await claim(a, s)).ok).toBe(true)
      expect((await execute(saveDraft, a, { sessionId: s, seq: 1, data: { label: 'yes' } })).ok).toBe(true)
      // The lease ends within a few milliseconds of the two requests.
      await sql().query(
        `UPDATE "SessionSeat" SET "leaseUntil" = now() + interval '15 milliseconds' WHERE "sessionId" = $1`,
        [s],
      )
      await new Promise((r) => setTimeout(r, 10))
      const [turn, taken] = await Promise.all([label(a, s), claim(b, s)])
      expect(turn.ok && taken.ok).toBe(false)
      const seat = await seatRow(s)
      const written = await db.protocolMessage.findMany({ where: { sessionId: s } })
      if (turn.ok) {
        expect(written.map((m) => m.authorUserId)).toEqual([a.userId])
        expect(seat.userId).toBe(a.userId)
      } else {
        expect(turn.status).toBe(409)
        expect(written).toEqual([])
      }
      // The draft goes with the turn that is written, and only then (the hold and the delete are one statement).
      expect(await db.turnDraft.count({ where: { sessionId: s, userId: a.userId } })).toBe(turn.ok ? 0 : 1)
      if (taken.ok) expect(seat.userId).toBe(b.userId)
    }
  })
})

describe('distinct claimants', () => {
  it('one person never holds two slots of an item (held, lapsed-and-retaken aside, or finished), even claiming at once', async () => {
    const { rows } = await slotsRun(2, 3, { distinctClaimants: true })
    const item = (position: number) => rows.filter((r) => r.position === position).map((r) => r.id)
    const [i1a, i1b, i1c] = item(0) as [string, string, string]
    const [i2a, i2b, i2c] = item(1) as [string, string, string]
    expect((await claim(a, i1a)).ok).toBe(true)
    const second = await claim(a, i1b)
    expect(second).toMatchObject({ ok: false, status: 409 })
    expect(!second.ok && second.error).toMatch(/different person/)
    expect((await seatRow(i1b)).userId).toBeNull()
    // Another item is fine; a finished slot still counts.
    expect((await claim(a, i2a)).ok).toBe(true)
    expect((await label(a, i1a)).ok).toBe(true)
    expect(await claim(a, i1c)).toMatchObject({ ok: false, status: 409 })
    // A lapsed claim no longer holds the slot: a may take another slot of that item instead.
    await lapse(i2a)
    expect((await claim(a, i2b)).ok).toBe(true)
    // Claims of one person at once for slots of different items all pass; for one item's slots, one wins.
    const both = await Promise.all([claim(c, i2c), claim(c, i1b)])
    expect(both.every((r) => r.ok)).toBe(true)
    const { rows: more } = await slotsRun(1, 3, { distinctClaimants: true })
    const raced = await Promise.all(more.map((r) => claim(b, r.id)))
    expect(raced.filter((r) => r.ok)).toHaveLength(1)
    const held = await db.sessionSeat.count({ where: { sessionId: { in: more.map((r) => r.id) }, userId: b.userId } })
    expect(held).toBe(1)
  })

  it('is off by default: without it one person may take two slots of an item', async () => {
    const { sessions } = await slotsRun(1, 2)
    const [s1, s2] = sessions as [string, string]
    expect((await claim(a, s1)).ok).toBe(true)
    expect((await claim(a, s2)).ok).toBe(true)
  })
})

describe('fill first', () => {
  it('offers the seats of items with fewer than N finished sessions first, the nearest to N first', async () => {
    // 3 items × 3 slots; item 3 has 2 finished sessions (N reached), item 2 has 1, item 1 none.
    const finish = async (sessionId: string, who: Actor) => {
      expect((await claim(who, sessionId)).ok).toBe(true)
      expect((await label(who, sessionId)).ok).toBe(true)
    }
    const positions = async (runId: string) => {
      const q = await execute(myQueue, c, { filter: 'claimable', pageSize: 100 })
      if (!q.ok) throw new Error(q.error)
      return q.data.items.filter((i) => i.runId === runId).map((i) => i.position)
    }
    const hinted = await slotsRun(3, 3, { fillFirst: 2 })
    const plain = await slotsRun(3, 3)
    for (const run of [hinted, plain]) {
      const at = (p: number, rep: number) =>
        run.rows.find((r) => r.position === p && r.repetition === rep)?.id as string
      await finish(at(2, 1), a)
      await finish(at(2, 2), b)
      await finish(at(1, 1), a)
    }
    // Item 2 (one finished) first, then item 1 (none), then item 3 (two: N reached).
    expect(await positions(hinted.runId)).toEqual([1, 1, 0, 0, 0, 2])
    // Without the hint: by repetition, then position.
    expect(await positions(plain.runId)).toEqual([0, 0, 1, 0, 1, 2])
  })
})
