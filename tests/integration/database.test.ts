import { afterAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { db, pgTransaction, sql, UnguardedBulkWriteError } from '@/lib/server/db'
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

  it('pgTransaction commits what its function wrote, and writes nothing when the function throws', async () => {
    const row = (id: string) => sql().query(`SELECT 1 FROM "AuditLog" WHERE id = $1`, [id])
    const insert = (c: pg.PoolClient, id: string) =>
      c.query(
        `INSERT INTO "AuditLog" (id, via, action, "resourceType", "resourceId") VALUES ($1, 'test', 'tx.test', 'test', $1)`,
        [id],
      )
    const kept = randomUUID()
    const done = await pgTransaction(async (c) => {
      await insert(c, kept)
      return 'done'
    })
    expect(done).toBe('done')
    expect((await row(kept)).rowCount).toBe(1)
    const lost = randomUUID()
    await expect(
      pgTransaction(async (c) => {
        await insert(c, lost)
        throw new Error('after the insert')
      }),
    ).rejects.toThrow('after the insert')
    expect((await row(lost)).rowCount).toBe(0)
    // The pool's client went back clean: the next statement is not inside an aborted transaction.
    expect((await sql().query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
  })
})

describe('migration 20261128070000 (an Experiment is a run)', () => {
  it('renames the run id of step jobs still queued from experimentId to runId, and leaves other jobs alone', async () => {
    const { queue: queueFor, stopBoss } = await import('@/lib/server/jobs/queue')
    const { readFileSync } = await import('node:fs')
    const name = `rename-test-${randomUUID().slice(0, 8)}`
    const b = await queueFor(name)
    try {
      const old = await b.send(name, { sessionId: 's1', experimentId: 'r1' })
      const other = await b.send(name, { sessionId: 's2' })
      // The migration's job part, run again on jobs queued by an older version.
      const text = readFileSync('prisma/migrations/20261128070000_experiment_is_a_run/migration.sql', 'utf8')
      const block = text.slice(text.indexOf('DO $$'))
      expect(block).toMatch(/END \$\$;/)
      await sql().query(block)
      const data = async (id: string | null) =>
        (await sql().query<{ data: unknown }>('SELECT data FROM pgboss.job WHERE name = $1 AND id = $2', [name, id]))
          .rows[0]?.data
      expect(await data(old)).toEqual({ sessionId: 's1', runId: 'r1' })
      expect(await data(other)).toEqual({ sessionId: 's2' })
    } finally {
      await sql().query('DELETE FROM pgboss.job WHERE name = $1', [name])
      await stopBoss()
    }
  })
})
