import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { addMember, createStudy, getStudy, listStudies, updateStudy } from '@/lib/server/services/studies'
import { setUserDisabled, updateUserRole } from '@/lib/server/services/users'
import { getSession, myQueue, submitTurn } from '@/lib/server/services/sessions'
import { makeAwaitingPxpSession, makeStudy, makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

describe('data scoping: people see only what is theirs', () => {
  it("an expert cannot open, answer or find another expert's session (404, not data)", async () => {
    const owner = await makeUser('researcher')
    const a = await makeUser('expert')
    const b = await makeUser('expert')
    const study = await makeStudy(owner, [a, b])
    const sessionB = await makeAwaitingPxpSession(study.id, b.userId)
    const turn = {
      sessionId: sessionB.id,
      seq: 2,
      matchPrev: 'false',
      agreePrev: 'false',
      prediction: 'CCO',
      explanation: 'x',
    }
    expect(await execute(getSession, a, { sessionId: sessionB.id })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(submitTurn, a, turn)).toMatchObject({ ok: false, status: 404 })
    expect(await db.protocolMessage.count({ where: { sessionId: sessionB.id } })).toBe(1)
    const mine = await execute(myQueue, a, {})
    expect(mine.ok && mine.data.items.map((w) => w.id)).not.toContain(sessionB.id)
    expect(await execute(getSession, b, { sessionId: sessionB.id })).toMatchObject({ ok: true })
    const theirs = await execute(myQueue, b, {})
    expect(theirs.ok && theirs.data.items.map((w) => w.id)).toContain(sessionB.id)
  })

  it('a researcher sees only studies they belong to; an admin sees all', async () => {
    const r1 = await makeUser('researcher')
    const r2 = await makeUser('researcher')
    const admin = await makeUser('admin')
    const created = await execute(createStudy, r1, { name: 'Private to r1' })
    if (!created.ok) throw new Error(created.error)
    const id = created.data.id
    expect(await execute(getStudy, r2, { studyId: id })).toMatchObject({ ok: false, status: 404 })
    expect(await execute(updateStudy, r2, { studyId: id, name: 'hijack' })).toMatchObject({ ok: false, status: 404 })
    const list = await execute(listStudies, r2, { pageSize: 100 })
    expect(list.ok && list.data.items.map((s) => s.id)).not.toContain(id)
    expect(await execute(getStudy, admin, { studyId: id })).toMatchObject({ ok: true })
    // The creator became a member and the change is in the audit log.
    const audit = await db.auditLog.findFirst({ where: { action: 'study.create', resourceId: id } })
    expect(audit).toMatchObject({ actorUserId: r1.userId, actorEmail: r1.email, via: 'session' })
    expect(audit?.after).toMatchObject({ name: 'Private to r1' })
  })

  it('a viewer member reads a study but cannot change it', async () => {
    const owner = await makeUser('researcher')
    const viewer = await makeUser('viewer')
    const study = await makeStudy(owner, [viewer])
    expect(await execute(getStudy, viewer, { studyId: study.id })).toMatchObject({ ok: true })
    expect(await execute(updateStudy, viewer, { studyId: study.id, name: 'x' })).toMatchObject({ status: 403 })
  })

  it('a study role never exceeds the account role', async () => {
    const owner = await makeUser('researcher')
    const annotator = await makeUser('annotator')
    const study = await makeStudy(owner)
    const r = await execute(addMember, owner, { studyId: study.id, email: annotator.email, role: 'researcher' })
    expect(r).toMatchObject({ ok: false, status: 400 })
    expect(await execute(addMember, owner, { studyId: study.id, email: annotator.email })).toMatchObject({ ok: true })
    expect(await execute(addMember, owner, { studyId: study.id, email: annotator.email })).toMatchObject({
      status: 409,
    })
  })

  it('the last active admin cannot be demoted or disabled', async () => {
    // Demote every other admin first so that exactly one remains.
    const admin = await makeUser('admin')
    // Other files share the database (the demo seed's admin among them): put them back afterwards.
    const others = (
      await db.user.findMany({ where: { role: 'admin', id: { not: admin.userId } }, select: { id: true } })
    ).map((u) => u.id)
    await db.user.updateMany({ where: { id: { in: others } }, data: { role: 'viewer' } })
    try {
      const r = await execute(updateUserRole, admin, { userId: admin.userId, role: 'viewer' })
      expect(r).toMatchObject({ ok: false, status: 400 })
      const second = await makeUser('admin')
      expect(await execute(setUserDisabled, second, { userId: admin.userId, disabled: true })).toMatchObject({
        ok: true,
      })
      expect(await execute(updateUserRole, second, { userId: second.userId, role: 'viewer' })).toMatchObject({
        status: 400,
      })
    } finally {
      await db.user.updateMany({ where: { id: { in: others } }, data: { role: 'admin' } })
    }
  })

  it('disabling a user ends their sessions', async () => {
    const admin = await makeUser('admin')
    const victim = await makeUser('expert')
    await db.session.create({
      data: {
        id: `s-${victim.userId}`,
        token: `t-${victim.userId}`,
        userId: victim.userId,
        expiresAt: new Date(Date.now() + 3600_000),
      },
    })
    expect(await execute(setUserDisabled, admin, { userId: victim.userId, disabled: 'true' })).toMatchObject({
      ok: true,
    })
    expect(await db.session.count({ where: { userId: victim.userId } })).toBe(0)
    const audit = await db.auditLog.findFirst({ where: { action: 'user.disable', resourceId: victim.userId } })
    expect(audit).toMatchObject({ before: { disabled: false }, after: { disabled: true }, actorUserId: admin.userId })
  })
})
