import { afterAll, describe, expect, it } from 'vitest'
import { db, UnguardedBulkWriteError } from '@/lib/server/db'
import { deploy } from '../../scripts/migrate.mjs'

afterAll(() => db.$disconnect())

describe('database', () => {
  it('migrations are applied (by global setup) and re-running them is a no-op', async () => {
    const applied = await deploy([], { quiet: true })
    expect(applied).toEqual([])
    const rows = await db.$queryRaw<Array<{ migration_name: string; finished_at: Date | null }>>`
      SELECT migration_name, finished_at FROM _prisma_migrations`
    expect(rows.length).toBeGreaterThan(0)
    for (const r of rows) expect(r.finished_at).not.toBeNull()
  })

  it('refuses updateMany / deleteMany without a where clause', async () => {
    await expect(db.auditLog.deleteMany({})).rejects.toBeInstanceOf(UnguardedBulkWriteError)
    await expect(db.auditLog.deleteMany()).rejects.toBeInstanceOf(UnguardedBulkWriteError)
    await expect(db.study.updateMany({ data: { description: 'all of them' } })).rejects.toBeInstanceOf(
      UnguardedBulkWriteError,
    )
    await expect(db.study.updateMany({ where: {}, data: { description: 'x' } })).rejects.toThrow(/non-empty where/)
    // With a where clause the same calls go through.
    await expect(db.study.updateMany({ where: { id: 'does-not-exist' }, data: { description: 'x' } })).resolves.toEqual(
      { count: 0 },
    )
  })

  it('the guard also holds inside transactions', async () => {
    await expect(db.$transaction((tx) => tx.auditLog.deleteMany({}))).rejects.toBeInstanceOf(UnguardedBulkWriteError)
  })
})
