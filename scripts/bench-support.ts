/**
 * What the benchmarks share: rounding and quantiles for their JSON line, the fake LLM server in a
 * child process (so its work does not share the measured event loop), a throwaway database (on the
 * server in DATABASE_URL, or the embedded PostgreSQL), and a researcher with a study and a
 * connection to the fake server.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses):
 * [0] state, [1] ppid, … [11] utime, [12] stime, [13] cutime, [14] cstime (USER_HZ ticks: 1/100 s).
 */
export function procStat(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** Whether `appDir` holds a production build (`next build`'s .next/BUILD_ID). */
export function hasProductionBuild(appDir: string): boolean {
  return existsSync(path.join(appDir, '.next', 'BUILD_ID'))
}

/** The resident memory (bytes, VmRSS of /proc/<pid>/status) of a process and its descendants, summed. */
export function processTreeRss(rootPid: number): number {
  const children = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)])
    } catch {}
  }
  let sum = 0
  const todo = [rootPid]
  while (todo.length) {
    const pid = todo.pop() as number
    todo.push(...(children.get(pid) ?? []))
    try {
      sum += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
    } catch {}
  }
  return sum
}

/**
 * The production server of `appDir` (scripts/serve.mjs where it has it, else `next start`) on
 * 127.0.0.1:`port` over `databaseUrl`, answering /api/v1/health; its output goes to a log file. A
 * missing build is an error that says to run `npm run build`.
 */
export async function startProductionServer(opts: {
  appDir: string
  port: number
  databaseUrl: string
  env?: Record<string, string>
}): Promise<{ child: ChildProcess; origin: string; log: string; stop(): Promise<void> }> {
  if (!hasProductionBuild(opts.appDir))
    throw new Error(`No production build in ${opts.appDir} (.next/BUILD_ID): run \`npm run build\` first.`)
  const origin = `http://127.0.0.1:${opts.port}`
  const log = path.join(os.tmpdir(), `parley-bench-server-${process.pid}.log`)
  const out = createWriteStream(log)
  const serve = path.join(opts.appDir, 'scripts/serve.mjs')
  const entry = existsSync(serve) ? [serve] : [path.join(opts.appDir, 'node_modules/next/dist/bin/next'), 'start']
  const child = spawn(process.execPath, [...entry, '-p', String(opts.port), '-H', '127.0.0.1'], {
    cwd: opts.appDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      BETTER_AUTH_URL: origin,
      PORT: String(opts.port),
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      PARLEY_DEMO: '0',
      // Every account signs in from one address within seconds.
      PARLEY_SIGNIN_PER_MINUTE: '100000',
      PARLEY_AUTH_RATE_LIMIT: 'off',
      ...opts.env,
    },
  })
  child.stdout?.pipe(out)
  child.stderr?.pipe(out)
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}; see ${log}`)
    try {
      const r = await fetch(`${origin}/api/v1/health`)
      await r.arrayBuffer()
      if (r.status === 200) break
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the server did not answer in 90 s; see ${log}`)
    }
    await sleep(250)
  }
  return {
    child,
    origin,
    log,
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(10_000)])
      if (child.exitCode === null) child.kill('SIGKILL')
    },
  }
}

/**
 * Wait until run `id` is done, asking with a plain statement every 25 ms (the harness should not compete
 * with the runner for CPU). Call after throwawayDatabase.
 */
export async function waitRunDone(id: string): Promise<void> {
  const { sql } = await import('../lib/server/db')
  for (;;) {
    const { rows } = await sql().query<{ status: string }>('SELECT status FROM "Run" WHERE id = $1', [id])
    if (rows[0]?.status === 'done') return
    await new Promise((r) => setTimeout(r, 25))
  }
}
