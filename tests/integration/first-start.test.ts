import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it, onTestFailed } from 'vitest'
import { freePort, hasBuild, ROOT } from '../support/processes'

/**
 * The README's first command (`npm install && npm start`; the install is what `npm test` itself ran)
 * on an empty data directory, with free ports: it must create the embedded PostgreSQL, migrate, seed the
 * demo (and that script must exit by itself: it once waited for ever on the job queue and the demo
 * model's server it had started), and serve. Every other test seeds in-process, so only this one sees
 * the first start as a new user does.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-first-start-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}

/** Whether any process of the process group `pgid` still runs (signal 0 only checks). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

describe.runIf(hasBuild())('npm start on an empty data directory', () => {
  it(
    'creates the database, seeds the demo, serves the sign-in page, and stops everything on Ctrl+C',
    async () => {
      const [port, pgPort] = [await freePort(), await freePort()]
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PARLEY_DATA_DIR: dataDir,
        PARLEY_PG_PORT: String(pgPort),
        PORT: String(port),
        HOST: '127.0.0.1',
        NEXT_TELEMETRY_DISABLED: '1',
      }
      // As on a fresh machine: no database, no secret, no demo switch; npm start chooses them itself.
      for (const name of ['DATABASE_URL', 'BETTER_AUTH_SECRET', 'BETTER_AUTH_URL', 'PARLEY_DEMO', 'NODE_ENV'])
        delete env[name]
      const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
      let out = ''
      npm.stdout.on('data', (b) => (out += b))
      npm.stderr.on('data', (b) => (out += b))
      onTestFailed(() => console.log(`npm start printed:\n${out.slice(-6000)}`))
      const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)))
      const base = `http://127.0.0.1:${port}`
      let stopped = false
      try {
        const until = Date.now() + 8 * 60_000
        for (;;) {
          if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${out}`)
          const r = await fetch(`${base}/api/v1/health`).catch(() => undefined)
          if (r?.ok) break
          if (Date.now() > until) throw new Error(`npm start did not serve within 8 minutes:\n${out.slice(-4000)}`)
          await new Promise((r) => setTimeout(r, 500))
        }
        expect(out).toMatch(/Seeded: /)
        expect(existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true)
        expect(readFileSync(path.join(dataDir, 'auth-secret'), 'utf8').trim().length).toBeGreaterThanOrEqual(32)

        // The sign-in page, and the demo admin signs in.
        const page = await fetch(`${base}/sign-in`)
        expect(page.status).toBe(200)
        expect(await page.text()).toMatch(/type="password"/)
        const signIn = await fetch(`${base}/api/auth/sign-in/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: base },
          body: JSON.stringify({ email: 'admin@parley.local', password: 'parley-demo' }),
        })
        expect(signIn.status).toBe(200)
      } finally {
        // Ctrl+C, as the README says to stop it: the terminal signals the whole foreground process group.
        // npm itself exits on the signal at once; what it started must follow, every process of the
        // group (the start script exits last, once the web processes drained and PostgreSQL stopped).
        if (npm.exitCode === null) process.kill(-(npm.pid as number), 'SIGINT')
        await exited
        const until = Date.now() + 60_000
        while (!stopped && Date.now() < until) {
          stopped = !groupAlive(npm.pid as number)
          if (!stopped) await new Promise((r) => setTimeout(r, 200))
        }
        if (!stopped) {
          try {
            process.kill(-(npm.pid as number), 'SIGKILL')
          } catch {}
        }
      }
      expect(stopped, `npm start did not stop within 60 s of Ctrl+C:\n${out.slice(-4000)}`).toBe(true)
      // In order: the web processes drained with their database still there (PostgreSQL, in a process
      // group of its own, did not get the terminal's Ctrl+C), then it stopped, then the start script said so.
      const afterCtrlC = out.slice(out.indexOf('shutting down'))
      expect(afterCtrlC).not.toMatch(
        /terminating connection due to administrator command|ECONNREFUSED|unhandledRejection/,
      )
      expect(out.trimEnd().endsWith('Parley stopped.')).toBe(true)
      // Nothing is left behind: the web server and the embedded PostgreSQL stopped with it.
      expect(await portOpen(port)).toBe(false)
      expect(await portOpen(pgPort)).toBe(false)
    },
    10 * 60_000,
  )
})
