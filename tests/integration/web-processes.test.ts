import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { afterAll, describe, expect, it } from 'vitest'
import { JEMALLOC_PATHS } from '../../lib/web-server.mjs'
import { hasBuild, type Proc, ROOT, startWeb, waitFor } from '../support/processes'

/**
 * scripts/serve.mjs, the production web server: PARLEY_WEB_PROCESSES `next start` processes on one
 * port, each with the heap limit, a replaced process when one dies, one clean stop.
 */
const PORT = 3410
const base = `http://127.0.0.1:${PORT}`
let server: Proc | undefined
afterAll(async () => {
  await server?.stop('SIGKILL')
})

/** The pids of a process's children, from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name))
    } catch {}
  }
  return out
}

const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.skipIf(!hasBuild())('the production web server (scripts/serve.mjs)', () => {
  it('serves one port from several processes, replaces one that dies, and stops them all on SIGTERM', async () => {
    server = await startWeb(
      PORT,
      { PARLEY_WEB_PROCESSES: '2', PARLEY_HEAP_MB: '300', PARLEY_WORKERS: '1' },
      { serve: true },
    )
    const primary = server.child.pid as number
    const web = await waitFor(
      'two web processes',
      async () => childrenOf(primary),
      (c) => c.length === 2,
    )
    for (const pid of web) {
      expect(environ(pid)).toContain('NODE_OPTIONS=--max-old-space-size=300 --max-semi-space-size=8')
      // Two processes fill a machine of two cores or fewer: their collectors run single-threaded.
      const execArgv = environ(pid).find((e) => e.startsWith('PARLEY_WEB_EXEC_ARGV=')) ?? ''
      expect(execArgv.split(/[= ]/).includes('--single-threaded-gc')).toBe(availableParallelism() <= 2)
    }
    // The C allocator: jemalloc, loaded into each process, where the machine has it (CI installs
    // libjemalloc2); glibc's otherwise.
    const jemalloc = JEMALLOC_PATHS.find((p) => existsSync(p))
    if (!jemalloc)
      console.log('note: jemalloc is not installed here; checking that the web processes run on the system allocator')
    for (const pid of web) {
      const maps = readFileSync(`/proc/${pid}/maps`, 'utf8')
      expect(maps.includes('libjemalloc')).toBe(Boolean(jemalloc))
    }
    // Only the first process works the job queue.
    const workers = web.map((pid) => environ(pid).find((e) => e.startsWith('PARLEY_WORKERS=')))
    expect(workers.sort()).toEqual(['PARLEY_WORKERS=0', 'PARLEY_WORKERS=1'])
    // Both answer: many requests over fresh connections reach the port without an error.
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${base}/api/v1/health`, { headers: { connection: 'close' } }).then((r) => r.status),
      ),
    )
    expect(statuses.every((s) => s === 200)).toBe(true)

    // A process that dies is replaced; the port keeps answering meanwhile.
    const victim = web[0] as number
    process.kill(victim, 'SIGKILL')
    const after = await waitFor(
      'a replacement process',
      async () => childrenOf(primary),
      (c) => c.length === 2 && !c.includes(victim),
    )
    await waitFor(
      'the replacement to answer',
      async () => (await fetch(`${base}/api/v1/health`, { headers: { connection: 'close' } })).status,
      (s) => s === 200,
    )
    expect(server.output()).toMatch(/web process \d \(pid \d+\) ended \(SIGKILL\); starting another/)

    // SIGTERM: every process shuts down and the primary exits 0.
    const { code } = await server.stop('SIGTERM')
    expect(code).toBe(0)
    for (const pid of after)
      await waitFor(
        `process ${pid} to end`,
        async () => alive(pid),
        (a) => !a,
        15_000,
      )
  }, 120_000)

  it('refuses a PARLEY_MALLOC it does not know before starting anything', async () => {
    const child = spawn(process.execPath, [`${ROOT}/scripts/serve.mjs`, '-p', String(PORT + 2), '-H', '127.0.0.1'], {
      cwd: ROOT,
      env: { ...process.env, PARLEY_MALLOC: 'tcmalloc', PARLEY_WORKERS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr?.on('data', (d) => {
      stderr += d
    })
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))
    expect(code).toBe(1)
    expect(stderr).toContain('PARLEY_MALLOC must be auto, jemalloc or system (got "tcmalloc").')
  }, 30_000)

  it('stops with the error when a process cannot start (the port is taken)', async () => {
    const blocker = await startWeb(PORT + 1, { PARLEY_WORKERS: '0' })
    try {
      const child = spawn(process.execPath, [`${ROOT}/scripts/serve.mjs`, '-p', String(PORT + 1), '-H', '127.0.0.1'], {
        cwd: ROOT,
        env: { ...process.env, PARLEY_WEB_PROCESSES: '2', PARLEY_WORKERS: '0' },
        stdio: 'ignore',
      })
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))
      expect(code).not.toBe(0)
    } finally {
      await blocker.stop('SIGKILL')
    }
  }, 120_000)
})
