import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'

/** Real Parley processes for the tests of several processes on one database (shutdown, limits, instances). */
export const ROOT = path.resolve(import.meta.dirname, '../..')

export interface Proc {
  child: ChildProcess
  /** Everything it wrote so far (stdout and stderr). */
  output(): string
  /** Resolves with the exit code once it exited. */
  exited: Promise<number | null>
  /** Send a signal and wait for the exit; returns the exit code and how long it took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>
}

function track(child: ChildProcess): Proc {
  let out = ''
  child.stdout?.on('data', (b) => (out += b))
  child.stderr?.on('data', (b) => (out += b))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  return {
    child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      const t0 = Date.now()
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      const code = await exited
      return { code, ms: Date.now() - t0 }
    },
  }
}

/** `parley worker` with these settings (on the test database). */
export function startWorker(env: Record<string, string> = {}, args: string[] = []): Proc {
  return track(
    spawn(process.execPath, [path.join(ROOT, 'bin/parley.mjs'), 'worker', ...args], {
      cwd: ROOT,
      env: { ...process.env, PARLEY_LOG_FORMAT: 'json', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )
}

/**
 * Whether `next build` has been run (the web-process tests need it). `npm test` builds before vitest,
 * so they run there; `npm run test:unit` on a checkout without a build skips them with a visible line.
 * In CI (CI=true) a missing build fails instead, so these tests can never silently not run.
 */
let buildChecked: boolean | undefined
export function hasBuild(): boolean {
  if (buildChecked !== undefined) return buildChecked
  buildChecked = existsSync(path.join(ROOT, '.next', 'BUILD_ID'))
  if (!buildChecked) {
    if (process.env.CI === 'true')
      throw new Error('CI=true but there is no build (.next/BUILD_ID): run `next build` first.')
    console.log('skipped: the tests that start `next start` need a build (npm run build)')
  }
  return buildChecked
}

/**
 * `next start` on a port (the build in .next), with these settings; resolves once it answers. With
 * `serve`, the production entry instead (scripts/serve.mjs: several web processes on the port).
 */
export async function startWeb(
  port: number,
  env: Record<string, string> = {},
  opts: { serve?: boolean } = {},
): Promise<Proc> {
  const [cmd, entry] = opts.serve
    ? [process.execPath, [path.join(ROOT, 'scripts/serve.mjs')]]
    : [path.join(ROOT, 'node_modules/.bin/next'), ['start']]
  const p = track(
    spawn(cmd, [...entry, '-p', String(port), '-H', '127.0.0.1'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        NEXT_TELEMETRY_DISABLED: '1',
        PARLEY_LOG_FORMAT: 'json',
        BETTER_AUTH_URL: `http://127.0.0.1:${port}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )
  const until = Date.now() + 60_000
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`next start exited: ${p.output()}`)
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/health`)
      if (r.ok) return p
    } catch {}
    if (Date.now() > until) {
      // Never leave it running on the port for the next test.
      await p.stop('SIGKILL')
      throw new Error(`next start did not answer: ${p.output()}`)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Sign in over HTTP; returns the Cookie header value. */
export async function signInCookie(base: string, email: string, password = 'correct horse battery'): Promise<string> {
  const r = await fetch(`${base}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email, password }),
  })
  if (!r.ok) throw new Error(`sign-in failed: ${r.status} ${await r.text()}`)
  return r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 60_000,
  pollMs = 100,
): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v)) return v
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`)
    await new Promise((r) => setTimeout(r, pollMs))
  }
}

/** A TCP port nobody listens on right now (the kernel's choice), for a server a test starts. */
export async function freePort(): Promise<number> {
  const net = await import('node:net')
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/**
 * Polls `url` every `everyMs` until connections are refused `refusedInARow` times, recording what
 * each request got: the status, or 'refused'. For watching a process drain.
 */
export async function pollUntilRefused(
  url: string,
  opts: { everyMs?: number; maxMs?: number; refusedInARow?: number } = {},
): Promise<Array<{ ms: number; status: number | 'refused'; body?: string }>> {
  const { everyMs = 100, maxMs = 60_000, refusedInARow = 3 } = opts
  const t0 = Date.now()
  const seen: Array<{ ms: number; status: number | 'refused'; body?: string }> = []
  let refused = 0
  while (Date.now() - t0 < maxMs && refused < refusedInARow) {
    const ms = Date.now() - t0
    try {
      const res = await fetch(url, { headers: { connection: 'close' }, signal: AbortSignal.timeout(5000) })
      seen.push({ ms, status: res.status, body: await res.text() })
      refused = 0
    } catch {
      seen.push({ ms, status: 'refused' })
      refused++
    }
    await new Promise((r) => setTimeout(r, everyMs))
  }
  return seen
}
