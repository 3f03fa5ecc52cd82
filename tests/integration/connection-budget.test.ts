import { afterAll, describe, expect, it } from 'vitest'
import { config } from '@/lib/server/config'
import { db, sql } from '@/lib/server/db'
import { boss, stopBoss } from '@/lib/server/jobs/queue'
import { webProcesses } from '../../lib/web-server.mjs'

/** Connections a process opens at most: Prisma's pool, the plain pool, pg-boss, and LISTEN (web only). */
export function perProcess(c: ReturnType<typeof config>, kind: 'web' | 'worker'): number {
  return c.dbPoolMax + c.dbHotPoolMax + c.jobPoolMax + (kind === 'web' ? 1 : 0)
}

afterAll(async () => {
  await stopBoss()
  await db.$disconnect()
})

describe('the connection budget (docs/OPERATIONS.md)', () => {
  it('the defaults fit the documented layout: 3 hosts running npm run start:next (2 web processes each) and 2 workers', () => {
    const web = perProcess(config({}), 'web')
    const worker = perProcess(config({ PARLEY_PROCESS: 'worker' }), 'worker')
    expect(web).toBe(4 + 4 + 2 + 1)
    expect(worker).toBe(2 + 6 + 3)
    // What one `npm run start:next` starts by default on any machine: one web process per core, at most two.
    const perHost = webProcesses(64)
    expect(perHost).toBe(2)
    const total = 3 * perHost * web + 2 * worker
    expect(total).toBe(88)
    // max_connections = 100, 3 reserved for superusers, and room for migrate, psql, pg_dump and the CLI.
    expect(total).toBeLessThanOrEqual(100 - 3 - 9)
  })

  it('each pool opens no more than its setting under load, named in pg_stat_activity', async () => {
    const c = config()
    // 30 slow statements at once through each pool: the pools queue them instead of opening more.
    const sleep = 'SELECT pg_sleep(0.3)::text AS slept'
    const b = await boss()
    const load = Promise.all([
      ...Array.from({ length: 30 }, () => sql().query(sleep)),
      ...Array.from({ length: 30 }, () => db.$queryRawUnsafe(sleep)),
      ...Array.from({ length: 30 }, () => b.getDb().executeSql(sleep, [])),
    ])
    await new Promise((r) => setTimeout(r, 150))
    const { rows } = await sql().query<{ app: string; n: string }>(
      `SELECT application_name AS app, count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name LIKE 'parley-%' GROUP BY 1`,
    )
    await load
    const n = Object.fromEntries(rows.map((r) => [r.app, Number(r.n)]))
    expect(n['parley-hot']).toBeLessThanOrEqual(c.dbHotPoolMax)
    expect(n['parley-prisma']).toBeLessThanOrEqual(c.dbPoolMax)
    expect(n['parley-jobs']).toBeLessThanOrEqual(c.jobPoolMax)
    expect(n['parley-hot']).toBeGreaterThan(1)
  })
})
