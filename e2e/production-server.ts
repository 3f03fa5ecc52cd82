import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import pg from 'pg'

const ROOT = path.resolve(import.meta.dirname, '..')

export interface ProductionServer {
  base: string
  databaseUrl: string
  output(): string
  stop(): Promise<void>
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    p.stdout.on('data', (b) => (out += b))
    p.stderr.on('data', (b) => (out += b))
    p.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`)),
    )
  })
}

/**
 * Parley as `npm start` runs it, on a database of its own: migrated by scripts/migrate.mjs, seeded by
 * prisma/seed.ts in its own process (which must exit by itself), then scripts/serve.mjs with its
 * default of two web processes. The shared e2e server runs one web process on a database the specs
 * seed in-process, so it cannot show what differs between the two layouts (the simulated model once
 * played only the runs seeded in-process; every new run in the production server fell back to its
 * generic replies).
 */
export async function startProductionServer(port: number): Promise<ProductionServer> {
  const admin = process.env.DATABASE_URL
  if (!admin) throw new Error('the e2e suite needs DATABASE_URL')
  const name = `parley_e2e_prod_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  await client.query(`CREATE DATABASE "${name}"`)
  await client.end()
  const url = new URL(admin)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  const base = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? 'e2e-secret-e2e-secret-e2e-secret-0123456789',
    BETTER_AUTH_URL: base,
    PORT: String(port),
    PARLEY_DEMO: '1',
    PARLEY_SIGNIN_PER_MINUTE: '10000',
    NEXT_TELEMETRY_DISABLED: '1',
  }
  delete env.PARLEY_WEB_PROCESSES // the default: one per core, at most two
  await run(process.execPath, ['scripts/migrate.mjs'], env)
  await run(process.execPath, ['--import', 'tsx', 'prisma/seed.ts', '--if-empty'], env)
  const child: ChildProcess = spawn(process.execPath, ['scripts/serve.mjs', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (b) => (out += b))
  child.stderr?.on('data', (b) => (out += b))
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    const c = new pg.Client({ connectionString: admin })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {})
    await c.end()
  }
  const until = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve.mjs exited:\n${out}`)
    const r = await fetch(`${base}/api/v1/health`).catch(() => undefined)
    if (r?.ok) break
    if (Date.now() > until) {
      await stop()
      throw new Error(`serve.mjs did not answer within 90 s:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  return { base, databaseUrl, output: () => out, stop }
}
