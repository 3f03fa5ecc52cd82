import { spawnSync } from 'node:child_process'
import { afterAll, expect, it } from 'vitest'
import { sql } from '@/lib/server/db'
import { heartbeatAge, worksQueue } from '@/lib/server/processes'
import { releaseProcessResources } from '@/lib/server/release'

afterAll(() => releaseProcessResources())

/**
 * A process that worked a queue beats every PARLEY_HEARTBEAT_SECONDS; releaseProcessResources stops that
 * too. A bench's heartbeat used to go on after the bench dropped its database and log "heartbeat
 * failed" after the JSON line that must be the bench's last.
 */
it('releaseProcessResources stops the heartbeat of a process that worked a queue, and removes its row', async () => {
  const rows = () =>
    sql().query<{ n: number }>(`SELECT count(*)::int AS n FROM "WorkerProcess" WHERE pid = $1`, [process.pid])
  worksQueue('release-probe')
  for (let i = 0; i < 100 && heartbeatAge() === undefined; i++) await new Promise((r) => setTimeout(r, 20))
  expect((await rows()).rows[0]?.n).toBe(1)
  await releaseProcessResources()
  const g = globalThis as { parleyProcess?: { timer?: unknown } }
  expect(g.parleyProcess?.timer).toBeUndefined()
  expect((await rows()).rows[0]?.n).toBe(0)
})

/**
 * Ending a pool resolves before its sockets have closed, so a bench that dropped its database right
 * after (`DROP DATABASE … WITH (FORCE)`) ended sessions the pools were still closing, and each printed
 * "database pool error" around the JSON line that must be the bench's last.
 */
it('a bench that drops its database right after using both pools prints nothing after or around its last line', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'tests/support/bench-drop.ts'], {
    encoding: 'utf8',
    env: { ...process.env, PARLEY_LOG_LEVEL: 'info' },
    timeout: 60_000,
  })
  expect(r.status, r.stderr).toBe(0)
  const out = `${r.stdout}${r.stderr}`
  expect(out).not.toMatch(/pool error/)
  expect(r.stdout.trim().split('\n').at(-1)).toBe('{"last":true}')
})
