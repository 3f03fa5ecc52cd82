import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/processes'

/**
 * A bad setting stops the production web server once, with the variable's name and a non-zero exit
 * (scripts/serve.mjs checks every setting before it starts a web process). It used to start them
 * anyway: the first refused its settings after it listened and was replaced again and again (24
 * restarts in 40 s), while the others, told PARLEY_WORKERS=0, answered ready 200.
 */
function run(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d) => (stdout += d))
  child.stderr?.on('data', (d) => (stderr += d))
  const t0 = Date.now()
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, ms: Date.now() - t0 })
    })
  })
}

const serve = (env: Record<string, string>) =>
  run([path.join(ROOT, 'scripts/serve.mjs'), '-p', '0', '-H', '127.0.0.1'], env)

describe('a bad setting stops the web server once, naming it', () => {
  it('PARLEY_WORKERS=four: exit 1 with the variable and its value, no web process started', async () => {
    const r = await serve({ PARLEY_WORKERS: 'four', PARLEY_WEB_PROCESSES: '2' })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('PARLEY_WORKERS: expected a whole number from 0 to 1000 (got "four")')
    expect(r.stderr.match(/Parley did not start/g)).toHaveLength(1)
    // Refused before anything started: no next start output at all.
    expect(r.stdout).toBe('')
    expect(r.stderr).not.toMatch(/starting another|Ready in/)
  }, 90_000)

  it('every bad variable is named, secrets without their value', async () => {
    const r = await serve({ PARLEY_DB_POOL_MAX: '0', BETTER_AUTH_SECRET: 'too-short-secret' })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('PARLEY_DB_POOL_MAX: must be at least 1 (got "0")')
    expect(r.stderr).toContain('BETTER_AUTH_SECRET: expected 32 or more random characters')
    expect(r.stderr).not.toContain('too-short-secret')
  }, 90_000)

  it('`parley config check` says the same, and 0 for good settings', async () => {
    const bad = await run([path.join(ROOT, 'bin/parley.mjs'), 'config', 'check'], { PARLEY_DRAIN_SECONDS: 'soon' })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('PARLEY_DRAIN_SECONDS: expected a whole number')
    const good = await run([path.join(ROOT, 'bin/parley.mjs'), 'config', 'check'], { PARLEY_DRAIN_SECONDS: '10' })
    expect(good.code).toBe(0)
    expect(good.stdout).toContain('The configuration is valid.')
  }, 60_000)
})
