import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasBuild, type Proc, ROOT, signInCookie, startWeb } from '../support/processes'

/**
 * Backup and restore (README "Run it for a lab"): `parley db export` copies the embedded PostgreSQL
 * 18 (no pg_dump ships with it) into a file that `parley db import` loads into a fresh, migrated
 * database (here the system PostgreSQL); `pg_dump` / `pg_restore` copy that one again; Parley then
 * serves the restored data, images included.
 */
const EMBEDDED_PORT = 3408
const dir = mkdtempSync(path.join(tmpdir(), 'parley-backup-'))
const admin = new URL(process.env.DATABASE_URL as string)
admin.pathname = '/postgres'
const urlOf = (name: string) => {
  const u = new URL(admin)
  u.pathname = `/${name}`
  return u.toString()
}
let stopEmbedded: () => Promise<void> = async () => {}
let embeddedUrl = ''
const procs: Proc[] = []
let served = 'parley_scale_restore'

/** Why pg_dump cannot dump the server at `url` here (missing, or older than the server), or null. */
async function pgDumpCannotDump(url: string): Promise<string | null> {
  let version: string
  try {
    version = execFileSync('pg_dump', ['--version'], { encoding: 'utf8' })
  } catch {
    return 'pg_dump / pg_restore: pg_dump is not installed'
  }
  const mine = Number(/\(PostgreSQL\)\s+(\d+)/.exec(version)?.[1] ?? 0)
  const [row] = await query<{ v: string }>(url, "SELECT current_setting('server_version_num') AS v")
  const server = Math.floor(Number(row?.v ?? 0) / 10000)
  return mine >= server ? null : `pg_dump / pg_restore: pg_dump ${mine} cannot dump a PostgreSQL ${server} server`
}

function parley(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/parley.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, PARLEY_LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 300_000,
  })
  if (r.status !== 0) throw new Error(`parley ${args.join(' ')} failed: ${r.stdout}${r.stderr}`)
  return `${r.stdout}${r.stderr}`
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query<T>(sql, params)).rows
  } finally {
    await c.end()
  }
}

async function freshDb(name: string) {
  await query(admin.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await query(admin.toString(), `CREATE DATABASE ${name}`)
}

/** Rows per table and a digest of every image: what must survive the round trip. */
async function fingerprint(url: string) {
  const counts = await query<{ t: string; n: string }>(
    url,
    `SELECT 'user' AS t, count(*)::text AS n FROM "user" UNION ALL SELECT 'Study', count(*)::text FROM "Study"
     UNION ALL SELECT 'Asset', count(*)::text FROM "Asset" UNION ALL SELECT 'ProtocolMessage', count(*)::text FROM "ProtocolMessage"
     UNION ALL SELECT 'LlmCall', count(*)::text FROM "LlmCall" UNION ALL SELECT 'Run', count(*)::text FROM "Run"`,
  )
  const assets = await query<{ id: string; bytes: Buffer }>(url, `SELECT id, bytes FROM "Asset" ORDER BY id`)
  const digest = createHash('sha256')
  for (const a of assets) digest.update(a.id).update(a.bytes)
  return { counts: Object.fromEntries(counts.map((r) => [r.t, Number(r.n)])), images: digest.digest('hex') }
}

beforeAll(async () => {
  const { startEmbedded } = await import('../../scripts/embedded-db.mjs')
  const e = await startEmbedded({
    dataDir: path.join(ROOT, '.data', 'test-backup-pg'),
    port: EMBEDDED_PORT,
    database: 'postgres',
    log: () => {},
  })
  stopEmbedded = e.stop
  const u = new URL(e.url)
  await query(u.toString(), 'DROP DATABASE IF EXISTS parley WITH (FORCE)')
  await query(u.toString(), 'CREATE DATABASE parley')
  u.pathname = '/parley'
  embeddedUrl = u.toString()
  parley(['db', 'migrate'], { DATABASE_URL: embeddedUrl })
  // The demo study: users, datasets with X-ray images, finished runs with their messages and calls.
  parley(['db', 'seed'], { DATABASE_URL: embeddedUrl })
}, 300_000)

afterAll(async () => {
  for (const p of procs) await p.stop('SIGTERM')
  await stopEmbedded()
})

describe('backup and restore', () => {
  let original: Awaited<ReturnType<typeof fingerprint>>

  it('parley db export copies the embedded database; parley db import loads it into a fresh one', async () => {
    original = await fingerprint(embeddedUrl)
    expect(original.counts.Asset).toBeGreaterThan(0)
    expect(original.counts.ProtocolMessage).toBeGreaterThan(0)
    const file = path.join(dir, 'parley.sql.gz')
    expect(parley(['db', 'export', file], { DATABASE_URL: embeddedUrl })).toMatch(/Exported \d+ rows/)
    await freshDb('parley_scale_restore')
    const target = urlOf('parley_scale_restore')
    parley(['db', 'migrate'], { DATABASE_URL: target })
    expect(parley(['db', 'import', file], { DATABASE_URL: target })).toMatch(/Imported \d+ rows/)
    expect(await fingerprint(target)).toEqual(original)
    // A second import into the same database is refused (it is not empty), and changes nothing.
    expect(() => parley(['db', 'import', file], { DATABASE_URL: target })).toThrow(/not empty/)
  }, 300_000)

  it('pg_dump / pg_restore copy the restored database again, images and all', async (ctx) => {
    // pg_dump refuses a newer server: on a clone testing against the embedded PostgreSQL 18 with
    // Debian's pg_dump 15 this step skips visibly (CI's server and pg_dump are the same version).
    const why = await pgDumpCannotDump(urlOf('parley_scale_restore'))
    if (why) {
      console.log(`skipped: ${why}`)
      ctx.skip()
    }
    const file = path.join(dir, 'parley.dump')
    execFileSync('pg_dump', ['-Fc', '--no-owner', '-f', file, '-d', urlOf('parley_scale_restore')])
    await freshDb('parley_scale_restore2')
    execFileSync('pg_restore', ['--no-owner', '-d', urlOf('parley_scale_restore2'), file])
    expect(await fingerprint(urlOf('parley_scale_restore2'))).toEqual(original)
    served = 'parley_scale_restore2'
  }, 120_000)

  it.runIf(hasBuild())(
    'Parley serves the restored database: sign in, open a study image',
    async () => {
      // The pg_restore'd copy when pg_dump could run here, else the `parley db import`ed one.
      const url = urlOf(served)
      const web = await startWeb(3404, { DATABASE_URL: url, PARLEY_WORKERS: '0' })
      procs.push(web)
      const base = 'http://127.0.0.1:3404'
      const cookie = await signInCookie(base, 'admin@parley.local', 'parley-demo')
      const [asset] = await query<{ datasetId: string; name: string; bytes: Buffer }>(
        url,
        `SELECT "datasetId", name, bytes FROM "Asset" ORDER BY id LIMIT 1`,
      )
      const res = await fetch(`${base}/api/assets/${asset?.datasetId}/${encodeURIComponent(asset?.name ?? '')}`, {
        headers: { cookie },
      })
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(asset?.bytes as Buffer)).toBe(true)
      const studies = await fetch(`${base}/api/v1/studies`, { headers: { cookie } })
      expect(studies.status).toBe(200)
      await web.stop('SIGTERM')
    },
    120_000,
  )
})
