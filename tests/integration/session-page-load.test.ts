import pg from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { getSession } from '@/lib/server/services/sessions'
import type { Actor } from '@/lib/server/actor'
import { makeAwaitingPxpSession, makeStudy, makeUser } from '../support/fixtures'

/**
 * The session page under load (bench:load): sessions.get reads the session, its seats and people,
 * study, run, the viewer's study role and the log in one statement, and still decides who may see
 * what exactly as before (the visibility rule of visibleSessions).
 */

/** Statements sent to PostgreSQL by every pg client (Prisma's adapter and the plain pool alike). */
function countStatements() {
  const spy = vi.spyOn(pg.Client.prototype, 'query')
  return { get: () => spy.mock.calls.length, restore: () => spy.mockRestore() }
}

afterEach(() => vi.restoreAllMocks())

async function world() {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const otherExpert = await makeUser('expert')
  const outsider = await makeUser('researcher')
  const viewer = await makeUser('viewer')
  const study = await makeStudy(researcher, [expert, otherExpert, viewer])
  const s = await makeAwaitingPxpSession(study.id, expert.userId)
  return { researcher, expert, otherExpert, outsider, viewer, study, s }
}

describe('sessions.get for the session page', () => {
  it('reads everything in one statement', async () => {
    const { expert, researcher, s } = await world()
    for (const actor of [expert, researcher] as Actor[]) {
      const count = countStatements()
      const r = await execute(getSession, actor, { sessionId: s.id })
      const statements = count.get()
      count.restore()
      expect(r.ok).toBe(true)
      expect(statements).toBe(1)
    }
  })

  it('shows the seated expert their turn, the people, the study and the log, without the ground truth', async () => {
    const { expert, study, s } = await world()
    const r = await execute(getSession, expert, { sessionId: s.id })
    if (!r.ok) throw new Error(r.error)
    expect(r.data).toMatchObject({
      id: s.id,
      yourTurn: true,
      mySeats: ['h'],
      ask: { seat: 'h', j: 2 },
      study: { id: study.id, name: study.name },
      run: null,
      messages: [{ seq: 1, byPerson: false, body: { tag: 'INIT', prediction: 'CCO' } }],
    })
    expect(r.data.messages[0]?.createdAt).toBeInstanceOf(Date)
    expect(r.data.messages[0]).not.toHaveProperty('meta')
    expect(r.data.seats.find((x) => x.name === 'h')?.person).toBe('expert tester')
    expect(JSON.stringify(r.data.view)).not.toContain('Fischer')
  })

  it('lets the study’s researchers and admins read it (with agents’ notes), and no other expert or outsider', async () => {
    const { researcher, viewer, otherExpert, outsider, s } = await world()
    const admin = await makeUser('admin')
    const asResearcher = await execute(getSession, researcher, { sessionId: s.id })
    if (!asResearcher.ok) throw new Error(asResearcher.error)
    expect(asResearcher.data.yourTurn).toBe(false)
    expect(asResearcher.data.messages[0]).toMatchObject({ meta: { raw: 'Prediction: CCO' } })
    expect(JSON.stringify(asResearcher.data.view)).toContain('Fischer')
    // An admin reads every study, member or not.
    expect((await execute(getSession, admin, { sessionId: s.id })).ok).toBe(true)
    // A viewer has no access to sessions at all (the scope), as before.
    expect(await execute(getSession, viewer, { sessionId: s.id })).toMatchObject({ ok: false, status: 403 })
    expect(await execute(getSession, otherExpert, { sessionId: s.id })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(getSession, outsider, { sessionId: s.id })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(getSession, researcher, { sessionId: 'no-such-session' })).toMatchObject({
      ok: false,
      status: 404,
    })
  })

  it('follows a change of study role at once (nothing about access is cached)', async () => {
    const { researcher, study, s } = await world()
    expect((await execute(getSession, researcher, { sessionId: s.id })).ok).toBe(true)
    await db.studyMember.delete({ where: { studyId_userId: { studyId: study.id, userId: researcher.userId } } })
    expect(await execute(getSession, researcher, { sessionId: s.id })).toMatchObject({ ok: false, status: 404 })
  })
})
