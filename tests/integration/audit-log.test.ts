import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { listAudit } from '@/lib/server/services/audit-log'
import { createStudy, updateStudy } from '@/lib/server/services/studies'
import { updateUserRole } from '@/lib/server/services/users'
import { makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

describe('the audit log names people, studies and resources', () => {
  it('each entry carries the current names beside the ids, and the page lists every resource type', async () => {
    const admin = await makeUser('admin')
    const researcher = await makeUser('researcher')
    const created = await execute(createStudy, researcher, { name: 'Audit naming study' })
    if (!created.ok) throw new Error(created.error)
    const studyId = created.data.id
    const renamed = await execute(updateStudy, researcher, { studyId, name: 'Audit naming study (renamed)' })
    expect(renamed).toMatchObject({ ok: true })
    expect(await execute(updateUserRole, admin, { userId: researcher.userId, role: 'viewer' })).toMatchObject({
      ok: true,
    })

    const studyRows = await execute(listAudit, admin, { resourceType: 'study', actor: researcher.email })
    if (!studyRows.ok) throw new Error(studyRows.error)
    const update = studyRows.data.items.find((e) => e.action === 'study.update')
    expect(update).toMatchObject({
      actorUserId: researcher.userId,
      actorName: 'researcher tester',
      resourceId: studyId,
      resourceName: 'Audit naming study (renamed)',
      studyId,
      studyName: 'Audit naming study (renamed)',
    })
    expect(studyRows.data.items.every((e) => e.resourceType === 'study')).toBe(true)

    const userRows = await execute(listAudit, admin, { action: 'user.update-role', resourceId: researcher.userId })
    if (!userRows.ok) throw new Error(userRows.error)
    expect(userRows.data.items[0]).toMatchObject({
      actorName: 'admin tester',
      resourceName: 'researcher tester',
      before: { role: 'researcher' },
      after: { role: 'viewer' },
    })
    expect(userRows.data.resourceTypes).toEqual(expect.arrayContaining(['study', 'user']))
    expect([...userRows.data.resourceTypes].sort()).toEqual(userRows.data.resourceTypes)
    expect(new Set(userRows.data.resourceTypes).size).toBe(userRows.data.resourceTypes.length)
  })

  it('an id whose row is gone keeps its id and no name', async () => {
    const admin = await makeUser('admin')
    await db.auditLog.create({
      data: {
        via: 'system',
        action: 'test.gone',
        resourceType: 'dataset',
        resourceId: 'no-such-dataset',
        studyId: 'no-such-study',
        actorUserId: 'no-such-user',
      },
    })
    const r = await execute(listAudit, admin, { action: 'test.gone' })
    if (!r.ok) throw new Error(r.error)
    expect(r.data.items[0]).toMatchObject({
      resourceId: 'no-such-dataset',
      resourceName: null,
      studyName: null,
      actorName: null,
    })
  })
})

describe('changes only: the audit log page leaves out sign-ins, turns and exports', () => {
  it('changesOnly drops the activity entries and keeps every change; without it everything is listed', async () => {
    const admin = await makeUser('admin')
    const marker = `changes-only-${Date.now()}`
    const entry = (action: string) => ({
      via: 'ui',
      action,
      resourceType: 'test-activity',
      resourceId: marker,
      actorEmail: admin.email,
    })
    await db.auditLog.createMany({
      data: [
        entry('auth.sign-in'),
        entry('session.turn'),
        entry('session.turn'),
        entry('run.export'),
        entry('study.update'),
        entry('session.claim'),
      ],
    })
    const actions = async (input: Record<string, unknown>) => {
      const r = await execute(listAudit, admin, { resourceId: marker, ...input })
      if (!r.ok) throw new Error(r.error)
      return r.data.items.map((e) => e.action).sort()
    }
    expect(await actions({ changesOnly: true })).toEqual(['session.claim', 'study.update'])
    // The page's query parameter form, and with an action filter too.
    expect(await actions({ changesOnly: 'true', action: 'session.' })).toEqual(['session.claim'])
    expect(await actions({})).toEqual([
      'auth.sign-in',
      'run.export',
      'session.claim',
      'session.turn',
      'session.turn',
      'study.update',
    ])
  })
})
