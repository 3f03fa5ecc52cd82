import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { endpoints } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { db } from '@/lib/server/db'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { cancelRun, createRun } from '@/lib/server/services/runs'
import { assignSeats, listOpenSeats, myQueue, releaseSeat } from '@/lib/server/services/sessions'
import { slotsDataset, toySlotsPlugin } from '../engine/toy-slots/plugin'
import { pxpFixture } from '../../protocols/pxp/fixture'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/**
 * A researcher gives people work by naming them on free claimable seats of a run (`sessions.assign`):
 * the one record of who sits where is SessionSeat, written as a claim writes it, and the sessions
 * appear in the person's one work queue. Every refusal writes nothing. On the toy protocol of
 * tests/engine/toy-slots (one claimable annotator seat per session) and a PXP run (its machine seat).
 */
const signedIn = vi.hoisted(() => ({ actor: null as Actor | null }))
vi.mock('next/headers', () => ({ headers: async () => new Headers() }))
vi.mock('next/cache', () => ({ revalidatePath: () => {} }))
vi.mock('@/lib/server/auth/session', () => ({
  getCurrentSession: async () => (signedIn.actor ? { actor: signedIn.actor, sessionId: 'test' } : null),
}))
const { assignSeatsAction } = await import('@/app/actions/studies')

registerPlugin(toySlotsPlugin)
const fake = useFakeLlm()

let researcher: Actor
let a: Actor
let b: Actor
let viewer: Actor
let outsider: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('expert')
  b = await makeUser('annotator')
  viewer = await makeUser('researcher')
  outsider = await makeUser('expert')
  studyId = (await makeStudy(researcher, [a, b, { ...viewer, role: 'viewer' }])).id
})
afterAll(async () => {
  await stopBoss()
})

/** A toy-slots run: `items` items × `slots` sessions each, every one with a free claimable annotator seat. */
async function slotsRun(items: number, slots: number, extra: Record<string, unknown> = {}, study = studyId) {
  const r = await execute(createRun, researcher, {
    studyId: study,
    protocol: 'toy-slots',
    name: 'labels',
    datasetId: await slotsDataset(study, items),
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: slots,
    ...extra,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const sessions = await db.protocolSession.findMany({
    where: { runId: r.data.id },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
    select: { id: true, position: true },
  })
  return { runId: r.data.id, sessions: sessions.map((s) => s.id), rows: sessions }
}

const assign = (who: Actor, input: Record<string, unknown>) => execute(assignSeats, who, input)
const seatsOf = (runId: string) =>
  db.sessionSeat.findMany({
    where: { session: { runId: runId } },
    orderBy: [{ sessionId: 'asc' }, { seat: 'asc' }],
  })
const assignAudits = () => db.auditLog.count({ where: { action: 'session.assign' } })
async function queueOf(who: Actor, runId: string) {
  const q = await execute(myQueue, who, { pageSize: 100 })
  if (!q.ok) throw new Error(q.error)
  return q.data.items.filter((i) => i.runId === runId)
}

describe('naming a member on a run’s free seats', () => {
  it('names the person on N open sessions, oldest first; they are theirs for good and in their queue; audited', async () => {
    const { runId, sessions } = await slotsRun(3, 1)
    const before = await assignAudits()
    const r = await assign(researcher, { studyId, runId, seat: 'annotator', userId: a.userId, count: 2 })
    expect(r).toMatchObject({ ok: true, data: { runId, seat: 'annotator', userId: a.userId, requested: 2 } })
    expect(r.ok && r.data.sessionIds).toEqual(sessions.slice(0, 2))
    for (const id of sessions.slice(0, 2)) {
      const row = await db.sessionSeat.findUniqueOrThrow({
        where: { sessionId_seat: { sessionId: id, seat: 'annotator' } },
      })
      // Held as a seat named for a person: no lease to lapse; still a claimable seat, so it can be given back.
      expect(row).toMatchObject({ userId: a.userId, claimable: true, leaseUntil: null })
      expect(row.claimedAt).not.toBeNull()
    }
    expect((await db.sessionSeat.findFirstOrThrow({ where: { sessionId: sessions[2] } })).userId).toBeNull()
    // The one queue: the person's own seated sessions …
    const mine = await queueOf(a, runId)
    expect(
      mine
        .filter((i) => i.mine)
        .map((i) => i.id)
        .sort(),
    ).toEqual(sessions.slice(0, 2).sort())
    // … and what is left is offered to others.
    const others = await queueOf(b, runId)
    expect(others.map((i) => i.id)).toEqual([sessions[2]])
    expect(others[0]?.grp).toBe('claimable')
    // One audit row per session named, by the researcher.
    expect(await assignAudits()).toBe(before + 2)
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: 'session.assign', resourceId: sessions[0] },
    })
    expect(audit).toMatchObject({ actorUserId: researcher.userId, resourceType: 'session', studyId })
    expect(audit.after).toMatchObject({ seat: 'annotator', userId: a.userId })
    // The study page's list of free seats counts what is left.
    const open = await execute(listOpenSeats, researcher, { studyId })
    expect(open.ok && open.data.filter((o) => o.runId === runId)).toEqual([
      expect.objectContaining({ seat: 'annotator', seatLabel: 'Annotator', free: 1 }),
    ])
    // The person may give a named claimable seat back; it is free again.
    expect(await execute(releaseSeat, a, { sessionId: sessions[0] as string })).toMatchObject({ ok: true })
    expect((await queueOf(b, runId)).map((i) => i.id).sort()).toEqual([sessions[0], sessions[2]].sort())
  })

  it('names on fewer when fewer are free, then refuses with 409 when none is, writing nothing', async () => {
    const { runId, sessions } = await slotsRun(2, 1)
    const r = await assign(researcher, { studyId, runId, seat: 'annotator', userId: b.userId, count: 5 })
    expect(r.ok && r.data.sessionIds.sort()).toEqual([...sessions].sort())
    const seats = await seatsOf(runId)
    const audits = await assignAudits()
    const again = await assign(researcher, { studyId, runId, seat: 'annotator', userId: a.userId, count: 1 })
    expect(again).toMatchObject({ ok: false, status: 409 })
    expect(!again.ok && again.error).toMatch(/No open session of labels has the annotator seat free/)
    expect(await seatsOf(runId)).toEqual(seats)
    expect(await assignAudits()).toBe(audits)
  })

  it('keeps a distinct-claimants run’s rule: one session of each item per person', async () => {
    const { runId, rows } = await slotsRun(2, 3, { distinctClaimants: true })
    const r = await assign(researcher, { studyId, runId, seat: 'annotator', userId: a.userId, count: 6 })
    expect(r.ok && r.data.sessionIds).toHaveLength(2)
    const positions = rows.filter((x) => r.ok && r.data.sessionIds.includes(x.id)).map((x) => x.position)
    expect(positions.sort()).toEqual([0, 1])
  })
})

describe('refusals write nothing', () => {
  it('a non-member, a member who only reads, a disabled member, another study’s run, a finished run, an expert account', async () => {
    const { runId } = await slotsRun(2, 1)
    const otherStudy = (await makeStudy(researcher, [a])).id
    const foreign = await slotsRun(1, 1, {}, otherStudy)
    const cancelled = await slotsRun(1, 1)
    expect(await execute(cancelRun, researcher, { runId: cancelled.runId })).toMatchObject({ ok: true })
    const disabled = await makeUser('expert')
    await db.studyMember.create({ data: { studyId, userId: disabled.userId, role: 'expert' } })
    await db.user.update({ where: { id: disabled.userId }, data: { disabled: true } })

    const seats = { mine: await seatsOf(runId), foreign: await seatsOf(foreign.runId) }
    const audits = await assignAudits()
    const base = { studyId, runId, seat: 'annotator', count: 1 }
    const cases: Array<[Actor, Record<string, unknown>, number, RegExp]> = [
      [researcher, { ...base, userId: outsider.userId }, 400, /only be given to members of the study/],
      [researcher, { ...base, userId: 'no-such-user' }, 400, /only be given to members of the study/],
      [researcher, { ...base, userId: viewer.userId }, 400, /does not take part/],
      [researcher, { ...base, userId: disabled.userId }, 400, /disabled/],
      [researcher, { ...base, runId: foreign.runId, userId: a.userId }, 404, /not found/i],
      [researcher, { ...base, runId: 'no-such-run', userId: a.userId }, 404, /not found/i],
      [researcher, { ...base, runId: cancelled.runId, userId: a.userId }, 409, /cancelled/],
      [researcher, { ...base, seat: 'nobody', userId: a.userId }, 400, /no seat "nobody"/],
      [researcher, { ...base, userId: a.userId, count: 0 }, 400, /at least one/],
      [a, { ...base, userId: a.userId }, 403, /.+/],
      // A researcher account that only reads this study cannot give its seats.
      [viewer, { ...base, userId: a.userId }, 403, /.+/],
    ]
    for (const [who, input, status, message] of cases) {
      const r = await assign(who, input)
      expect(r, JSON.stringify(input)).toMatchObject({ ok: false, status })
      expect(!r.ok && r.error).toMatch(message)
    }
    expect(await seatsOf(runId)).toEqual(seats.mine)
    expect(await seatsOf(foreign.runId)).toEqual(seats.foreign)
    expect(await assignAudits()).toBe(audits)
  })

  it('a seat that is not a person’s (an LLM seat), or a seat named for one person, is refused with 400', async () => {
    const conn = await fakeConnection(studyId, fake())
    const w = { researcher, expert: a, studyId, connectionId: conn.id, fake: fake() }
    const datasetId = await pxpFixture.dataset(w, 2)
    const make = async (h: Record<string, unknown>) => {
      const setup = pxpFixture.humanSetup?.(w, datasetId) as { seats: Record<string, unknown> }
      const r = await execute(createRun, researcher, {
        studyId,
        protocol: 'pxp',
        ...setup,
        seats: { ...setup.seats, h: { kind: 'human', ...h } },
      })
      if (!r.ok) throw new Error(r.error)
      return r.data.id
    }
    const claimable = await make({ claimable: true })
    const named = await make({ userId: a.userId })
    const seats = { claimable: await seatsOf(claimable), named: await seatsOf(named) }
    const audits = await assignAudits()
    const llm = await assign(researcher, { studyId, runId: claimable, seat: 'm', userId: b.userId, count: 1 })
    expect(llm).toMatchObject({ ok: false, status: 400, fieldErrors: { seat: ['Choose a seat people fill.'] } })
    expect(!llm.ok && llm.error).toMatch(/not a person/)
    const own = await assign(researcher, { studyId, runId: named, seat: 'h', userId: b.userId, count: 1 })
    expect(own).toMatchObject({ ok: false, status: 400 })
    expect(!own.ok && own.error).toMatch(/only claimable seats/)
    expect(await seatsOf(claimable)).toEqual(seats.claimable)
    expect(await seatsOf(named)).toEqual(seats.named)
    expect(await assignAudits()).toBe(audits)
    // The person's seat of that run is still offered to be given.
    expect(
      await assign(researcher, { studyId, runId: claimable, seat: 'h', userId: b.userId, count: 1 }),
    ).toMatchObject({
      ok: true,
    })
  })
})

describe('over REST and from the study page’s form', () => {
  it('POST /studies/{studyId}/seats names the person; their GET /work lists the session', async () => {
    const { runId, sessions } = await slotsRun(1, 1)
    const key = async (who: Actor) => {
      const k = await execute(createApiKey, who, { name: 'script' })
      if (!k.ok) throw new Error(k.error)
      return k.data.key
    }
    const call = async (ep: keyof typeof endpoints, who: Actor, body?: unknown) => {
      const e = endpoints[ep]
      const req = new Request(`http://127.0.0.1/api/v1${e.path.replace('{studyId}', studyId)}`, {
        method: e.method,
        headers: { authorization: `Bearer ${await key(who)}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
      const res = await handle(e)(req, { params: Promise.resolve({ studyId }) })
      return { status: res.status, body: await res.json() }
    }
    const given = await call('assignSeats', researcher, { runId, seat: 'annotator', userId: b.userId, count: 1 })
    expect(given).toMatchObject({ status: 200, body: { sessionIds: sessions, email: b.email } })
    const work = await call('workQueue', b)
    expect(work.status).toBe(200)
    expect(work.body.items).toContainEqual(expect.objectContaining({ id: sessions[0], mine: true, seat: 'annotator' }))
    // A person of the study cannot name anyone (403), nothing changes.
    const refused = await call('assignSeats', a, { runId, seat: 'annotator', userId: a.userId, count: 1 })
    expect(refused.status).toBe(403)
  })

  it('the form sends run and seat as one choice, and says how many sessions it named', async () => {
    const { runId, sessions } = await slotsRun(2, 1)
    const fd = (fields: Record<string, string>) => {
      const f = new FormData()
      for (const [k, v] of Object.entries(fields)) f.set(k, v)
      return f
    }
    signedIn.actor = researcher
    try {
      const ok = await assignSeatsAction(
        null,
        fd({ studyId, slot: `${runId}/annotator`, userId: a.userId, count: '3' }),
      )
      expect(ok).toMatchObject({ ok: true })
      expect(ok && 'message' in ok && ok.message).toMatch(/Assigned .* to 2 of the 3 sessions asked/)
      expect((await db.sessionSeat.findMany({ where: { sessionId: { in: sessions } } })).map((s) => s.userId)).toEqual([
        a.userId,
        a.userId,
      ])
      const none = await assignSeatsAction(null, fd({ studyId, slot: '', userId: a.userId, count: '1' }))
      expect(none).toMatchObject({ ok: false })
      expect(none && !none.ok && none.error).toMatch(/Choose a run/)
    } finally {
      signedIn.actor = null
    }
  })
})
