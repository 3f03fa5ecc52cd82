import { verifyPassword } from 'better-auth/crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createPreset, getPreset, updatePreset } from '@/lib/server/services/presets'
import { changePassword } from '@/lib/server/services/users'
import { makeStudy, makeUser } from '../support/fixtures'

afterAll(() => db.$disconnect())

describe('password change', () => {
  it('needs the current password, stores a new scrypt hash, and ends the other sessions only', async () => {
    const user = await makeUser('expert', 'old password 123')
    const soon = new Date(Date.now() + 3600_000)
    await db.session.createMany({
      data: [
        { id: `keep-${user.userId}`, token: `keep-${user.userId}`, userId: user.userId, expiresAt: soon },
        { id: `drop-${user.userId}`, token: `drop-${user.userId}`, userId: user.userId, expiresAt: soon },
      ],
    })
    const wrong = await execute(
      changePassword,
      user,
      { currentPassword: 'not it', newPassword: 'new password 456' },
      { sessionId: `keep-${user.userId}` },
    )
    expect(wrong).toMatchObject({ ok: false, status: 400, fieldErrors: { currentPassword: ['Not correct.'] } })
    const same = await execute(changePassword, user, {
      currentPassword: 'old password 123',
      newPassword: 'old password 123',
    })
    expect(same).toMatchObject({ ok: false, status: 400 })
    const ok = await execute(
      changePassword,
      user,
      { currentPassword: 'old password 123', newPassword: 'new password 456' },
      { sessionId: `keep-${user.userId}` },
    )
    expect(ok).toMatchObject({ ok: true })
    const account = await db.account.findFirstOrThrow({ where: { userId: user.userId, providerId: 'credential' } })
    expect(await verifyPassword({ hash: account.password as string, password: 'new password 456' })).toBe(true)
    expect(await verifyPassword({ hash: account.password as string, password: 'old password 123' })).toBe(false)
    expect((await db.session.findMany({ where: { userId: user.userId } })).map((s) => s.id)).toEqual([
      `keep-${user.userId}`,
    ])
    expect(await db.auditLog.count({ where: { action: 'profile.change-password', resourceId: user.userId } })).toBe(1)
  })
})

describe('model presets are versioned', () => {
  it('a change appends a version, an unchanged save does not, and old versions stay as they were', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const connection = await db.llmConnection.create({
      data: {
        studyId: study.id,
        name: 'demo',
        provider: 'demo',
        baseUrl: 'builtin:demo',
        defaultModel: 'parley-demo-simulated',
      },
    })
    const created = await execute(createPreset, researcher, {
      name: 'Checker',
      studyId: study.id,
      connectionId: connection.id,
      model: 'parley-demo-simulated',
      temperature: '0',
      systemPrompt: 'Answer Yes or No.',
    })
    if (!created.ok) throw new Error(created.error)
    const presetId = created.data.id
    const same = await execute(updatePreset, researcher, {
      presetId,
      connectionId: connection.id,
      model: 'parley-demo-simulated',
      temperature: 0,
      systemPrompt: 'Answer Yes or No.',
    })
    expect(same).toMatchObject({ ok: true, data: { version: 1, created: false } })
    const changed = await execute(updatePreset, researcher, {
      presetId,
      connectionId: connection.id,
      model: 'parley-demo-simulated',
      temperature: 0.7,
      systemPrompt: 'Answer Yes or No.',
    })
    expect(changed).toMatchObject({ ok: true, data: { version: 2, created: true } })
    const preset = await execute(getPreset, researcher, { presetId })
    if (!preset.ok) throw new Error(preset.error)
    expect(preset.data.versions.map((v) => [v.version, v.temperature])).toEqual([
      [2, 0.7],
      [1, 0],
    ])
    // Concurrent edits still get distinct, gapless version numbers.
    const results = await Promise.all(
      [0.1, 0.2, 0.3].map((t) =>
        execute(updatePreset, researcher, {
          presetId,
          connectionId: connection.id,
          model: 'parley-demo-simulated',
          temperature: t,
          systemPrompt: 'Answer Yes or No.',
        }),
      ),
    )
    const versions = results.map((r) => (r.ok ? r.data.version : -1)).sort()
    expect(versions).toEqual([3, 4, 5])
  })
})
