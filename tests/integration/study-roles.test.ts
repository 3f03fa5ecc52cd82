import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { ROLES } from '@/lib/server/auth/roles'
import { mayHoldStudyRole, STUDY_PERMISSIONS, STUDY_ROLES } from '@/lib/server/auth/study-roles'
import { db } from '@/lib/server/db'
import { mayWatch } from '@/lib/server/live-access'
import { execute, type Operation } from '@/lib/server/operation'
import { OPERATIONS } from '@/lib/server/operations'
import { exportRun } from '@/lib/server/services/run-export'
import { getSession, inspectSession } from '@/lib/server/services/sessions'
import {
  addMember,
  createStudy,
  getStudy,
  removeMember,
  requireStudyAccess,
  studiesWhere,
  updateStudy,
} from '@/lib/server/services/studies'
import { makeStudy, makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

/** An operation by name (the registry is the one list every entry point uses). */
function op(name: string): Operation<unknown, unknown> {
  const found = OPERATIONS.find((o) => o.name === name)
  if (!found) throw new Error(`no operation ${name}`)
  return found as Operation<unknown, unknown>
}

/** A study created through createStudy by a researcher, with the given members added by them. */
async function studyOf(owner: Actor, members: Array<[Actor, string?]> = []) {
  const created = await execute(createStudy, owner, { name: 'Roles study' })
  if (!created.ok) throw new Error(created.error)
  for (const [m, role] of members) {
    const r = await execute(addMember, owner, { studyId: created.data.id, email: m.email, ...(role ? { role } : {}) })
    if (!r.ok) throw new Error(r.error)
  }
  return created.data.id
}

const memberIds = async (studyId: string) =>
  (await db.studyMember.findMany({ where: { studyId }, select: { userId: true } })).map((m) => m.userId)

describe('study roles', () => {
  it('a researcher who is only a viewer member cannot rename the study, remove its owner or export its data', async () => {
    const owner = await makeUser('researcher')
    const viewer = await makeUser('researcher')
    const studyId = await studyOf(owner, [[viewer, 'viewer']])
    const experiment = await db.run.create({
      data: {
        studyId,
        name: 'pilot',
        protocol: 'pxp',
        task: 'drug',
        datasetId: 'none',
        config: { n: 10, k: 3 },
        seats: {},
        repetitions: 1,
      },
    })
    expect(await execute(getStudy, viewer, { studyId })).toMatchObject({ ok: true })
    expect(await execute(updateStudy, viewer, { studyId, name: 'Renamed' })).toMatchObject({ ok: false, status: 403 })
    expect(await execute(removeMember, viewer, { studyId, userId: owner.userId })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect(await execute(exportRun, viewer, { runId: experiment.id, table: 'm' })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect((await db.study.findUniqueOrThrow({ where: { id: studyId } })).name).toBe('Roles study')
    expect(await memberIds(studyId)).toContain(owner.userId)
  })

  it('the owner cannot be removed by a member who does not manage the study', async () => {
    const owner = await makeUser('researcher')
    const colleague = await makeUser('researcher')
    const studyId = await studyOf(owner, [[colleague]])
    // A researcher member writes (datasets, experiments …) but does not manage members.
    expect(await execute(removeMember, colleague, { studyId, userId: owner.userId })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect(await memberIds(studyId)).toContain(owner.userId)
  })

  it('the last manager cannot be removed or demoted; with a second manager they can leave', async () => {
    const owner = await makeUser('researcher')
    const colleague = await makeUser('researcher')
    const admin = await makeUser('admin') // not a member: studies:read-all manages every study
    const studyId = await studyOf(owner, [[colleague]])
    expect(await execute(removeMember, owner, { studyId, userId: owner.userId })).toMatchObject({
      ok: false,
      status: 400,
      error: expect.stringMatching(/manager/),
    })
    expect(await execute(removeMember, admin, { studyId, userId: owner.userId })).toMatchObject({
      ok: false,
      status: 400,
    })
    const setRole = op('studies.set-member-role')
    expect(await execute(setRole, owner, { studyId, userId: owner.userId, role: 'researcher' })).toMatchObject({
      ok: false,
      status: 400,
    })
    expect(await memberIds(studyId)).toContain(owner.userId)
    // Make the colleague a study admin (a researcher account may manage a study), then the owner can go.
    expect(await execute(setRole, owner, { studyId, userId: colleague.userId, role: 'admin' })).toMatchObject({
      ok: true,
    })
    expect(await execute(removeMember, colleague, { studyId, userId: owner.userId })).toMatchObject({ ok: true })
    expect(await memberIds(studyId)).not.toContain(owner.userId)
    // Now the colleague is the last manager.
    expect(await execute(removeMember, colleague, { studyId, userId: colleague.userId })).toMatchObject({
      status: 400,
    })
  })

  it("changing a member's role is a manage operation, audited, and never beyond the account role", async () => {
    const owner = await makeUser('researcher')
    const colleague = await makeUser('researcher')
    const expert = await makeUser('expert')
    const viewer = await makeUser('viewer')
    const studyId = await studyOf(owner, [[colleague], [expert], [viewer]])
    const setRole = op('studies.set-member-role')
    expect(await execute(setRole, colleague, { studyId, userId: expert.userId, role: 'annotator' })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect(await execute(setRole, owner, { studyId, userId: viewer.userId, role: 'researcher' })).toMatchObject({
      ok: false,
      status: 400,
    })
    expect(await execute(setRole, owner, { studyId, userId: expert.userId, role: 'admin' })).toMatchObject({
      ok: false,
      status: 400,
    })
    expect(await execute(setRole, owner, { studyId, userId: expert.userId, role: 'annotator' })).toMatchObject({
      ok: true,
    })
    const member = await db.studyMember.findUniqueOrThrow({
      where: { studyId_userId: { studyId, userId: expert.userId } },
    })
    expect(member.role).toBe('annotator')
    const audit = await db.auditLog.findFirst({
      where: { action: 'study.set-member-role', studyId },
      orderBy: { createdAt: 'desc' },
    })
    expect(audit).toMatchObject({
      actorUserId: owner.userId,
      before: { userId: expert.userId, role: 'expert' },
      after: { userId: expert.userId, role: 'annotator' },
    })
    // The study page shows each member's study role.
    const page = await execute(getStudy, owner, { studyId })
    expect(page.ok && page.data.members.find((m) => m.user.id === expert.userId)?.role).toBe('annotator')
    // A member who is not there cannot be changed.
    const stranger = await makeUser('expert')
    expect(await execute(setRole, owner, { studyId, userId: stranger.userId, role: 'expert' })).toMatchObject({
      status: 404,
    })
  })

  it('a study admin makes an annotator account the study’s adjudicator, never a viewer account; an unknown role is refused', async () => {
    const owner = await makeUser('researcher')
    const annotator = await makeUser('annotator')
    const viewer = await makeUser('viewer')
    const studyId = await studyOf(owner, [[annotator], [viewer]])
    const setRole = op('studies.set-member-role')
    const made = await execute(setRole, owner, { studyId, userId: annotator.userId, role: 'adjudicator' })
    expect(made).toMatchObject({ ok: true, data: { role: 'adjudicator', label: 'Adjudicator', changed: true } })
    expect(await execute(setRole, owner, { studyId, userId: viewer.userId, role: 'adjudicator' })).toMatchObject({
      ok: false,
      status: 400,
    })
    expect(await execute(setRole, owner, { studyId, userId: viewer.userId, role: 'owner' })).toMatchObject({
      ok: false,
      status: 400,
    })
    const another = await makeUser('expert')
    expect(await execute(addMember, owner, { studyId, email: another.email, role: 'adjudicator' })).toMatchObject({
      ok: true,
      data: { role: 'adjudicator' },
    })
    // Adjudicating, not reading: the annotator account sees no more of the study than before.
    expect(await requireStudyAccess(db, annotator, studyId, 'adjudicate')).toMatchObject({ access: ['adjudicate'] })
    await expect(requireStudyAccess(db, annotator, studyId, 'read')).rejects.toMatchObject({ status: 404 })
  })

  it('the creator of a study manages it; a researcher added with the default role does not', async () => {
    const owner = await makeUser('researcher')
    const colleague = await makeUser('researcher')
    const studyId = await studyOf(owner, [[colleague]])
    expect(await execute(updateStudy, owner, { studyId, name: 'Renamed by owner' })).toMatchObject({ ok: true })
    expect(await execute(updateStudy, colleague, { studyId, name: 'Renamed by colleague' })).toMatchObject({
      ok: false,
      status: 403,
    })
  })
})

describe('a member in an expert or annotator study role sees only their own work', () => {
  /** A study with a PXP session and a debate session for `mine` and the same for `theirs`. */
  async function setup(studyRole: 'expert' | 'annotator') {
    const owner = await makeUser('researcher')
    // A researcher account (work:read-study) that is only an expert/annotator in this study.
    const me = await makeUser('researcher')
    const other = await makeUser('expert')
    const studyId = await studyOf(owner, [[me, studyRole], [other]])
    const session = (assignee: Actor, protocol: 'pxp' | 'evince') =>
      db.protocolSession.create({
        data: {
          studyId,
          protocol,
          protocolVersion: '1',
          config: protocol === 'pxp' ? { n: 10, k: 3 } : { k: 3, maxRounds: 2, crit: false, report: false },
          task: protocol === 'pxp' ? 'drug' : 'diagnosis',
          instance:
            protocol === 'pxp'
              ? { input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'esterification' }
              : { input: { symptoms: 'fever' }, prediction: 'Flu', explanation: '' },
          seats:
            protocol === 'pxp'
              ? {
                  m: { kind: 'proxy', helpers: { checker: { connectionId: 'x' } }, params: {} },
                  h: { kind: 'human', userId: assignee.userId, claimable: false },
                }
              : {
                  A: { kind: 'human', userId: assignee.userId, claimable: false },
                  B: { kind: 'llm', model: { connectionId: 'x' }, helpers: {} },
                  moderator: { kind: 'program', program: 'no-judge', helpers: {}, params: {} },
                },
          people: { create: { seat: protocol === 'pxp' ? 'h' : 'A', userId: assignee.userId } },
        },
      })
    return {
      me,
      mine: { pxp: await session(me, 'pxp'), debate: await session(me, 'evince') },
      theirs: {
        pxp: await session(other, 'pxp'),
        debate: await session(other, 'evince'),
      },
    }
  }

  for (const role of ['expert', 'annotator'] as const) {
    it(`${role}: their own session and debate open; another member's answer 404`, async () => {
      const { me, mine, theirs } = await setup(role)
      expect(await execute(getSession, me, { sessionId: mine.pxp.id })).toMatchObject({ ok: true })
      expect(await execute(getSession, me, { sessionId: mine.debate.id })).toMatchObject({ ok: true })
      expect(await execute(getSession, me, { sessionId: theirs.pxp.id })).toMatchObject({ status: 404 })
      expect(await execute(getSession, me, { sessionId: theirs.debate.id })).toMatchObject({ status: 404 })
      expect(await execute(inspectSession, me, { sessionId: theirs.pxp.id })).toMatchObject({ status: 404 })
      expect(await execute(inspectSession, me, { sessionId: mine.pxp.id })).toMatchObject({ status: 404 })
      // The debate's ground truth is for people who read the study, not for a debater.
      const view = await execute(getSession, me, { sessionId: mine.debate.id })
      expect(view.ok && (view.data.view as { truth?: unknown }).truth).toBeNull()
      // Live streams follow the same rule.
      expect(await mayWatch(me, `session:${mine.pxp.id}`)).toBe(true)
      expect(await mayWatch(me, `session:${theirs.pxp.id}`)).toBe(false)
    })
  }

  it('live experiment streams need read access to the study', async () => {
    const owner = await makeUser('researcher')
    const viewer = await makeUser('researcher')
    const expert = await makeUser('researcher')
    const studyId = await studyOf(owner, [
      [viewer, 'viewer'],
      [expert, 'expert'],
    ])
    const e = await db.run.create({
      data: {
        studyId,
        name: 'live',
        protocol: 'pxp',
        task: 'drug',
        datasetId: 'none',
        config: {},
        seats: {},
        repetitions: 1,
      },
    })
    expect(await mayWatch(viewer, `run:${e.id}`)).toBe(true)
    expect(await mayWatch(expert, `run:${e.id}`)).toBe(false)
    expect(await mayWatch(await makeUser('researcher'), `run:${e.id}`)).toBe(false)
  })
})

describe('one rule, two forms', () => {
  it('studiesWhere (lists, joins) and requireStudyAccess (one study) agree for every account, study role and need', async () => {
    const owner = await makeUser('researcher')
    for (const account of ROLES) {
      const actor = await makeUser(account) // one account, a member of one study per study role
      for (const studyRole of [...STUDY_ROLES, null]) {
        if (studyRole && !mayHoldStudyRole(account, studyRole)) continue
        const study = await makeStudy(owner, studyRole ? [{ ...actor, role: studyRole }] : [])
        for (const need of STUDY_PERMISSIONS) {
          const listed = (await db.study.count({ where: { id: study.id, ...studiesWhere(actor, need) } })) === 1
          const single = await requireStudyAccess(db, actor, study.id, need).then(
            () => true,
            () => false,
          )
          expect({ account, studyRole, need, listed }).toEqual({ account, studyRole, need, listed: single })
        }
      }
    }
  })
})

describe('the migration that makes existing creators study admins', () => {
  it('turns a creator recorded with the researcher role into a study admin, and nobody else', async () => {
    const creator = await makeUser('researcher')
    const colleague = await makeUser('researcher')
    const viewer = await makeUser('viewer')
    const study = await db.study.create({
      data: {
        name: 'Before study roles',
        createdById: creator.userId,
        members: {
          create: [
            { userId: creator.userId, role: 'researcher' },
            { userId: colleague.userId, role: 'researcher' },
            { userId: viewer.userId, role: 'viewer' },
          ],
        },
      },
    })
    const sql = readFileSync(
      path.resolve(import.meta.dirname, '../../prisma/migrations/20261124043950_study_creator_admin/migration.sql'),
      'utf8',
    )
    // Inside a transaction that is rolled back, so the rest of the database is left as it was.
    const rollback = new Error('rollback')
    let roles: Record<string, string> = {}
    await db
      .$transaction(async (tx) => {
        await tx.$executeRawUnsafe(sql)
        roles = Object.fromEntries(
          (await tx.studyMember.findMany({ where: { studyId: study.id } })).map((m) => [m.userId, m.role]),
        )
        throw rollback
      })
      .catch((err) => {
        if (err !== rollback) throw err
      })
    expect(roles).toEqual({ [creator.userId]: 'admin', [colleague.userId]: 'researcher', [viewer.userId]: 'viewer' })
  })
})

describe('connections and presets of a study', () => {
  it('listing them for a study you cannot read shows none of them', async () => {
    const owner = await makeUser('researcher')
    const expertMember = await makeUser('researcher')
    const stranger = await makeUser('researcher')
    const studyId = await studyOf(owner, [[expertMember, 'expert']])
    const connection = await db.llmConnection.create({
      data: { studyId, name: 'Secret vLLM', provider: 'demo', baseUrl: 'builtin:demo', defaultModel: 'm' },
    })
    await db.modelPreset.create({
      data: {
        name: 'Secret preset',
        studyId,
        versions: { create: { version: 1, connectionId: connection.id, model: 'm' } },
      },
    })
    for (const who of [expertMember, stranger]) {
      for (const name of ['connections.list', 'presets.list']) {
        const r = await execute(op(name), who, { studyId })
        expect(r).toMatchObject({ ok: true })
        expect(JSON.stringify(r.ok && r.data)).not.toContain(studyId)
      }
    }
    const own = await execute(op('connections.list'), owner, { studyId })
    expect(JSON.stringify(own.ok && own.data)).toContain(connection.id)
  })
})
