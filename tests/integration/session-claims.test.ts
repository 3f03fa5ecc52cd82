import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { type Endpoint, endpoints } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { db, sql } from '@/lib/server/db'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { createRun } from '@/lib/server/services/runs'
import { claimSeat, getSession, myQueue, submitTurn } from '@/lib/server/services/sessions'
import { pxpFixture } from '../../protocols/pxp/fixture'
import { machineOpens, makeSession, makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

/**
 * Claiming a seat is taking part in the study (lib/server/auth/study-roles.ts `mayTakePart`): the
 * account's work:submit AND a study role that takes part; a viewer of the study reads its sessions
 * and never fills a seat. A session the person cannot see is 404 for a claim as for a read.
 */
const fake = useFakeLlm()
afterAll(async () => {
  // The turns sent here queued the sessions' next steps; no worker of this file takes them.
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

const machine = { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } }

/** A PXP session of the study whose machine opened and whose human seat h is `h`. */
async function pxpSession(studyId: string, h: Record<string, unknown>, status = 'awaiting') {
  const s = await makeSession(studyId, {
    protocol: 'pxp',
    config: { n: 10, k: 3 },
    task: 'drug',
    instance: { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' },
    seats: { m: machine, h: { kind: 'human', ...h } },
  })
  await db.protocolSession.update({ where: { id: s.id }, data: { status, awaitingSeat: 'h' } })
  await machineOpens(s.id, { prediction: 'CCO', explanation: 'a guess' })
  return s
}

const turn = (sessionId: string) => ({
  sessionId,
  seq: 2,
  matchPrev: 'false',
  agreePrev: 'false',
  prediction: 'CCO.CC(=O)O',
  explanation: 'esterification',
})

async function rest(ep: Endpoint, actor: Actor, sessionId: string, body: unknown) {
  const k = await execute(createApiKey, actor, { name: 'script' })
  if (!k.ok) throw new Error(k.error)
  const req = new Request(`http://127.0.0.1/api/v1${ep.path.replace('{sessionId}', sessionId)}`, {
    method: ep.method,
    headers: { authorization: `Bearer ${k.data.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const res = await handle(ep)(req, { params: Promise.resolve({ sessionId }) })
  return { status: res.status, body: (await res.json()) as { error?: string } }
}

describe('claiming a seat takes part in the study', () => {
  it('a viewer of the study (a researcher account) is not offered the seat, and its claim is refused with 403', async () => {
    const owner = await makeUser('researcher')
    const viewer = await makeUser('researcher')
    const study = await makeStudy(owner, [{ ...viewer, role: 'viewer' }])
    const s = await pxpSession(study.id, { claimable: true })

    // It reads the session (a viewer reads everything of the study) …
    const page = await execute(getSession, viewer, { sessionId: s.id })
    expect(page).toMatchObject({ ok: true })
    // … but is not offered its seat, neither on the page nor in the work queue.
    expect(page.ok && page.data.claimableSeats).toEqual([])
    const queue = await execute(myQueue, viewer, { filter: 'claimable' })
    expect(queue.ok && queue.data.items.map((i) => i.id)).not.toContain(s.id)

    const claim = await rest(endpoints.claimSeat, viewer, s.id, { seat: 'h' })
    expect(claim.status).toBe(403)
    expect(claim.body.error).toMatch(/does not take part/)
    const seat = await db.sessionSeat.findFirstOrThrow({ where: { sessionId: s.id, seat: 'h' } })
    expect(seat.userId).toBeNull()
    // The turn that would have followed is refused too (the viewer holds no seat: 404).
    expect((await rest(endpoints.submitTurn, viewer, s.id, turn(s.id))).status).toBe(404)
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(1)
  })

  it('an expert member claims the seat and sends the turn (201)', async () => {
    const owner = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(owner, [expert])
    const s = await pxpSession(study.id, { claimable: true })
    const queue = await execute(myQueue, expert, { filter: 'claimable' })
    expect(queue.ok && queue.data.items.map((i) => i.id)).toContain(s.id)
    expect((await rest(endpoints.claimSeat, expert, s.id, { seat: 'h' })).status).toBe(200)
    expect((await rest(endpoints.submitTurn, expert, s.id, turn(s.id))).status).toBe(201)
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(2)
  })

  it('a member made a viewer after taking a seat sends no more turns (403)', async () => {
    const owner = await makeUser('researcher')
    const person = await makeUser('researcher')
    const study = await makeStudy(owner, [{ ...person, role: 'expert' }])
    const s = await pxpSession(study.id, { userId: person.userId })
    await db.studyMember.update({
      where: { studyId_userId: { studyId: study.id, userId: person.userId } },
      data: { role: 'viewer' },
    })
    expect(await execute(submitTurn, person, turn(s.id))).toMatchObject({ ok: false, status: 403 })
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(1)
  })

  it('a session the claimant cannot see answers 404 to a claim, as to a read (no existence oracle)', async () => {
    const owner = await makeUser('researcher')
    const expert = await makeUser('expert')
    const someoneElse = await makeUser('expert')
    const study = await makeStudy(owner, [expert, someoneElse])
    const otherStudy = await makeStudy(owner, [someoneElse])
    // Named for someone else; a claimable seat of a study the expert is not in; an ended session
    // whose claimable seat was never taken.
    const invisible = [
      await pxpSession(study.id, { userId: someoneElse.userId }),
      await pxpSession(otherStudy.id, { claimable: true }),
      await pxpSession(study.id, { claimable: true }, 'done'),
    ]
    for (const s of invisible) {
      const read = await execute(getSession, expert, { sessionId: s.id })
      const claim = await execute(claimSeat, expert, { sessionId: s.id, seat: 'h' })
      expect(read).toMatchObject({ ok: false, status: 404 })
      expect(claim).toEqual(read)
    }
    // An id that does not exist answers the same.
    expect(await execute(claimSeat, expert, { sessionId: 'no-such-session', seat: 'h' })).toEqual(
      await execute(getSession, expert, { sessionId: 'no-such-session' }),
    )
    // Offered to the expert: a seat someone took first is a 409 they can act on.
    const taken = await pxpSession(study.id, { claimable: true })
    expect(await execute(claimSeat, someoneElse, { sessionId: taken.id, seat: 'h' })).toMatchObject({ ok: true })
    expect(await execute(claimSeat, expert, { sessionId: taken.id, seat: 'h' })).toMatchObject({
      ok: false,
      status: 409,
    })
  })

  it('a run names no viewer of the study in a seat', async () => {
    const owner = await makeUser('researcher')
    const viewer = await makeUser('researcher')
    const expert = await makeUser('expert')
    const study = await makeStudy(owner, [{ ...viewer, role: 'viewer' }, expert])
    const conn = await fakeConnection(study.id, fake())
    const w = { researcher: owner, expert, studyId: study.id, connectionId: conn.id, fake: fake() }
    const datasetId = await pxpFixture.dataset(w, 2)
    const setup = (person: Actor) => ({
      studyId: study.id,
      protocol: 'pxp',
      ...pxpFixture.humanSetup?.({ ...w, expert: person }, datasetId),
    })
    const refused = await execute(createRun, owner, setup(viewer))
    expect(refused).toMatchObject({ ok: false, status: 400, error: expect.stringMatching(/only reads this study/) })
    expect(await execute(createRun, owner, setup(expert))).toMatchObject({ ok: true })
  })
})
