import { afterAll, describe, expect, it } from 'vitest'
import { createFirstAdmin, ensureAdminFromEnv, needsSetup } from '@/lib/server/bootstrap'
import { db } from '@/lib/server/db'
import { DEMO_USERS, seedDemo } from '@/lib/server/seed'

afterAll(() => db.$disconnect())

async function withoutAdmins<T>(fn: () => Promise<T>): Promise<T> {
  // Park existing admins as viewers so the "no admin yet" path can be exercised, then restore them.
  const admins = await db.user.findMany({ where: { role: 'admin' }, select: { id: true } })
  const ids = admins.map((a) => a.id)
  if (ids.length) await db.user.updateMany({ where: { id: { in: ids } }, data: { role: 'viewer' } })
  try {
    return await fn()
  } finally {
    await db.user.deleteMany({ where: { email: { endsWith: '@first-admin.test' } } })
    if (ids.length) await db.user.updateMany({ where: { id: { in: ids } }, data: { role: 'admin' } })
  }
}

describe('first admin and demo seed', () => {
  it('two app instances starting together create exactly one first admin', async () => {
    await withoutAdmins(async () => {
      expect(await needsSetup()).toBe(true)
      const [a, b] = await Promise.all([
        createFirstAdmin({ email: 'a@first-admin.test', name: 'A', password: 'first admin pw' }, 'test'),
        createFirstAdmin({ email: 'b@first-admin.test', name: 'B', password: 'first admin pw' }, 'test'),
      ])
      expect([a, b].filter(Boolean)).toHaveLength(1)
      expect(await needsSetup()).toBe(false)
      expect(
        await db.auditLog.count({
          where: { action: 'user.create-first-admin', after: { path: ['email'], string_contains: 'first-admin.test' } },
        }),
      ).toBe(1)
    })
  })

  it('PARLEY_ADMIN_EMAIL / PASSWORD create the admin once; a second start changes nothing', async () => {
    await withoutAdmins(async () => {
      process.env.PARLEY_ADMIN_EMAIL = 'env@first-admin.test'
      process.env.PARLEY_ADMIN_PASSWORD = 'from the environment'
      try {
        await ensureAdminFromEnv()
        await ensureAdminFromEnv()
        const rows = await db.user.findMany({ where: { email: 'env@first-admin.test' } })
        expect(rows).toHaveLength(1)
        expect(rows[0]?.role).toBe('admin')
      } finally {
        delete process.env.PARLEY_ADMIN_EMAIL
        delete process.env.PARLEY_ADMIN_PASSWORD
      }
    })
  })

  it('the demo seed is deterministic and idempotent', async () => {
    await seedDemo()
    const second = await seedDemo()
    expect(second.created).toEqual([])
    const users = await db.user.findMany({ where: { email: { in: DEMO_USERS.map((u) => u.email) } } })
    const pairs = (list: Array<{ email: string; role: string }>) => list.map((u) => `${u.email} ${u.role}`).sort()
    expect(pairs(users)).toEqual(pairs(DEMO_USERS))
    // Finished runs for every protocol, played by the offline demo model (dashboards to look at).
    const runs = await db.run.findMany({ where: { studyId: 'demo-study' }, orderBy: { name: 'asc' } })
    const finished = runs.filter((r) => r.status === 'done').map((r) => r.protocol)
    expect(finished.filter((p) => p === 'pxp')).toHaveLength(2)
    expect(finished).toContain('evince')
    expect(finished).toContain('scorekeeping')
    expect(await db.protocolSession.count({ where: { studyId: 'demo-study', status: 'stalled' } })).toBe(0)
    const pxpRuns = runs.filter((r) => r.protocol === 'pxp' && r.status === 'done')
    expect(pxpRuns.every((r) => r.repetitions === 2)).toBe(true)
    // Sessions waiting for the demo experts, and a game anyone may claim.
    for (const email of ['expert@parley.local', 'expert2@parley.local']) {
      const waiting = await db.protocolSession.count({
        where: { status: 'awaiting', people: { some: { user: { email } } } },
      })
      expect(waiting, email).toBeGreaterThan(0)
    }
    expect(
      await db.sessionSeat.count({ where: { claimable: true, userId: null, session: { studyId: 'demo-study' } } }),
    ).toBeGreaterThan(0)
  })
})
