/**
 * What the benchmarks share: rounding and quantiles for their JSON line, the fake LLM server in a
 * child process (so its work does not share the measured event loop), a throwaway database (on the
 * server in DATABASE_URL, or the embedded PostgreSQL), and a researcher with a study and a
 * connection to the fake server.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { startEmbedded } from './embedded-db.mjs'
import { deploy } from './migrate.mjs'
// Every bench's composition root: the protocol plugins are bound for the services it calls in-process.
import '../lib/server/protocols/bind'

export const root = path.resolve(import.meta.dirname, '..')

export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d

/** The q-quantile (nearest rank) of unsorted values; NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN
}

/** The fake OpenAI-compatible server in a child process, with an optional script; resolves its URL. */
export async function fakeLlmChild(opts: {
  latencyMs: number
  script?: unknown
}): Promise<{ url: string; child: ChildProcess; stop(): void }> {
  const scriptFile = opts.script === undefined ? undefined : path.join(os.tmpdir(), `parley-bench-${process.pid}.json`)
  if (scriptFile) writeFileSync(scriptFile, JSON.stringify(opts.script))
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'lib/llm/fake-server-cli.ts'),
      '--port',
      '0',
      '--latency',
      String(opts.latencyMs),
      ...(scriptFile ? ['--script', scriptFile] : []),
      '--no-bodies',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve((JSON.parse(line) as { url: string }).url))
    child.once('exit', (code) => reject(new Error(`fake server exited with ${code}`)))
  })
  return {
    url,
    child,
    stop() {
      child.kill()
      if (scriptFile) rmSync(scriptFile, { force: true })
    },
  }
}

/**
 * A fresh database (named `<prefix>_<time>`, `parley_bench_…` by default), migrated, in DATABASE_URL
 * for the rest of the process; `drop()` removes it (and stops the embedded PostgreSQL if one was started).
 */
export async function throwawayDatabase(opts: { prefix?: string } = {}): Promise<{ drop(): Promise<void> }> {
  let embedded: { url: string; stop: () => Promise<void> } | undefined
  let adminUrl = process.env.DATABASE_URL
  if (!adminUrl) {
    embedded = await startEmbedded({
      dataDir: path.join(root, '.data', 'test-pg'),
      port: Number(process.env.PARLEY_TEST_PG_PORT ?? 54330),
      database: 'postgres',
    })
    adminUrl = embedded.url
  }
  const dbName = `${opts.prefix ?? 'parley_bench'}_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${dbName}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  process.env.DATABASE_URL = url.toString()
  process.env.BETTER_AUTH_SECRET ??= 'bench-secret-bench-secret-bench-secret-0123'
  process.env.PARLEY_JOB_MAINTENANCE_SECONDS = '30'
  await deploy([], { quiet: true })
  return {
    async drop() {
      // Everything this process holds on the database first: a heartbeat that beat after the drop logged
      // a line after the bench's JSON, which must be the last line.
      const { releaseProcessResources } = await import('../lib/server/release')
      await releaseProcessResources()
      await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
      await admin.end()
      await embedded?.stop()
    },
  }
}

/** A researcher, their study and a connection to the fake server (call after throwawayDatabase). */
export async function benchWorld(opts: { baseURL: string; defaultModel: string; maxConcurrency: number }) {
  const { db } = await import('../lib/server/db')
  const user = await db.user.create({
    data: {
      id: `bench-${Date.now()}`,
      email: `bench-${Date.now()}@parley.local`,
      name: 'Bench',
      role: 'researcher',
      emailVerified: true,
    },
  })
  const actor = {
    userId: user.id,
    email: user.email,
    name: user.name,
    role: 'researcher' as const,
    via: 'cli' as const,
  }
  const study = await db.study.create({
    data: { name: 'bench', createdById: user.id, members: { create: { userId: user.id, role: 'researcher' } } },
  })
  const conn = await db.llmConnection.create({
    data: {
      studyId: study.id,
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: opts.baseURL,
      defaultModel: opts.defaultModel,
      timeoutMs: 30_000,
      maxConcurrency: opts.maxConcurrency,
    },
  })
  return { actor, study, conn }
}

/** A DRUG dataset of `n` made-up esters (PXP's benches: every instance a distinct molecule). */
export async function esterDataset(studyId: string, name: string, n: number) {
  const { db } = await import('../lib/server/db')
  return db.dataset.create({
    data: {
      studyId,
      name,
      kind: 'drug',
      source: 'generated',
      instances: {
        create: Array.from({ length: n }, (_, i) => ({
          index: i,
          input: { smiles: `${'C'.repeat(1 + (i % 7))}C(=O)O${i}` },
          prediction: `${'C'.repeat(1 + (i % 7))}O.OC`,
          explanation: `Ester number ${i}.`,
        })),
      },
    },
  })
}

/** A grey-noise PNG (incompressible, so about width × height bytes: an X-ray-sized payload). */
export async function noisePng(width: number, height: number, seed: number): Promise<Buffer> {
  const zlib = await import('node:zlib')
  const crc = (b: Buffer) => (zlib.crc32 as (d: Buffer) => number)(b)
  const chunk = (type: string, data: Buffer) => {
    const t = Buffer.from(type, 'ascii')
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const c = Buffer.alloc(4)
    c.writeUInt32BE(crc(Buffer.concat([t, data])) >>> 0)
    return Buffer.concat([len, t, data, c])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 0 // greyscale
  let s = seed >>> 0 || 1
  const raw = Buffer.alloc((width + 1) * height)
  for (let y = 0; y < height; y++) {
    raw[y * (width + 1)] = 0
    for (let x = 0; x < width; x++) {
      s ^= s << 13
      s ^= s >>> 17
      s ^= s << 5
      raw[y * (width + 1) + 1 + x] = s & 0xff
    }
  }
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}
