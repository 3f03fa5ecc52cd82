import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { DEMO_CONNECTION_ID, ensureDemoConnection } from '@/lib/server/llm/runtime'
import { execute } from '@/lib/server/operation'
import { defaultOwner, getConnection, moveConnection, ownerOptions } from '@/lib/server/services/connections'
import { updateStudy } from '@/lib/server/services/studies'
import { makeStudy, makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

const connectionIn = (studyId: string | null) =>
  db.llmConnection.create({
    data: {
      studyId,
      name: 'lab vLLM',
      provider: 'openai-compatible',
      baseUrl: 'https://llm.example.org/v1',
      defaultModel: 'm',
    },
  })

describe('a new connection starts in the study the researcher is working in', () => {
  it('the study asked for, else the study of their latest change, else the first', async () => {
    const researcher = await makeUser('researcher')
    const first = await makeStudy(researcher)
    const second = await makeStudy(researcher)
    const owners = await ownerOptions(researcher)
    expect(owners.map((o) => o.value)).toEqual(expect.arrayContaining([first.id, second.id]))
    // Nothing done yet: the first option (researchers have no global option).
    expect(await defaultOwner(researcher, owners)).toBe(owners[0]?.value)
    // Working in the second study (an audited change there) makes it the default.
    expect(await execute(updateStudy, researcher, { studyId: second.id, description: 'pilot' })).toMatchObject({
      ok: true,
    })
    expect(await defaultOwner(researcher, owners)).toBe(second.id)
    // A study page's link asks for its study.
    expect(await defaultOwner(researcher, owners, first.id)).toBe(first.id)
    // A study they may not own connections in is not taken from the address.
    const other = await makeStudy(await makeUser('researcher'))
    expect(await defaultOwner(researcher, owners, other.id)).toBe(second.id)
  })
})

describe('a connection can be moved later', () => {
  it('to another study the person writes in; the old study loses it, the audit says where it went', async () => {
    const researcher = await makeUser('researcher')
    const colleague = await makeUser('researcher')
    const from = await makeStudy(researcher, [colleague])
    const to = await makeStudy(researcher)
    const c = await connectionIn(from.id)
    expect(await execute(getConnection, colleague, { connectionId: c.id })).toMatchObject({ ok: true })
    const moved = await execute(moveConnection, researcher, { connectionId: c.id, studyId: to.id })
    expect(moved).toMatchObject({ ok: true, data: { studyId: to.id } })
    // The colleague is not in the new study: the connection is gone for them.
    expect(await execute(getConnection, colleague, { connectionId: c.id })).toMatchObject({ ok: false, status: 404 })
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: 'connection.move', resourceId: c.id } })
    expect(audit).toMatchObject({ before: { studyId: from.id }, after: { studyId: to.id } })
  })

  it('not into a study they only read, not global unless admin, never the built-in demo model', async () => {
    const researcher = await makeUser('researcher')
    const owner = await makeUser('researcher')
    const mine = await makeStudy(researcher)
    const readOnly = await makeStudy(owner, [{ ...researcher, role: 'viewer' }])
    const c = await connectionIn(mine.id)
    expect(await execute(moveConnection, researcher, { connectionId: c.id, studyId: readOnly.id })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect(await execute(moveConnection, researcher, { connectionId: c.id, studyId: '' })).toMatchObject({
      ok: false,
      status: 403,
    })
    expect((await db.llmConnection.findUniqueOrThrow({ where: { id: c.id } })).studyId).toBe(mine.id)
    const admin = await makeUser('admin')
    expect(await execute(moveConnection, admin, { connectionId: c.id, studyId: '' })).toMatchObject({
      ok: true,
      data: { studyId: null },
    })
    await ensureDemoConnection()
    expect(await execute(moveConnection, admin, { connectionId: DEMO_CONNECTION_ID, studyId: mine.id })).toMatchObject({
      ok: false,
      status: 400,
    })
  })
})
