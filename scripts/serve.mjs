#!/usr/bin/env node
// Parley's production web server (`npm run start:next -- -p 3000 -H 0.0.0.0`, and what `npm start`
// runs): `next start` in PARLEY_WEB_PROCESSES processes that share one port through Node's cluster
// module (the primary accepts connections and hands them round-robin to the processes), each with
// a V8 heap of at most PARLEY_HEAP_MB. Arguments are next start's.
//
// - Only the first process works the job queue (PARLEY_WORKERS); the others serve requests only.
// - The processes run with jemalloc when it is installed (PARLEY_MALLOC, lib/web-server.mjs).
// - SIGTERM / SIGINT: every process shuts down as one `next start` does (readiness 503, sessions
//   handed back, live streams closed); the primary exits when they all have.
// - Settings are checked once, here, before any process starts (the .env files included): a bad one
//   exits 1 naming the variable. A process that dies after it was serving is replaced; one that
//   dies before it ever listened (a port in use) or refuses its settings stops the server with its
//   exit code.
// - Metrics: a scrape reaches any one process, which answers for all of them (aggregated here).
import { spawnSync } from 'node:child_process'
import cluster from 'node:cluster'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import client from 'prom-client'
import { webAllocator, webHeapMb, webProcesses, webV8Flags } from '../lib/web-server.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The exit code of a web process that refused its configuration (instrumentation.ts): EX_CONFIG. */
const CONFIG_EXIT = 78

if (cluster.isPrimary) {
  // The settings as the web processes will see them: the environment, then the .env files next
  // start loads (the environment wins).
  // (@next/env is next's own loader, resolved from next so that it is the copy next start uses.)
  const nextEnv = require(require.resolve('@next/env', { paths: [path.dirname(require.resolve('next/package.json'))] }))
  nextEnv.loadEnvConfig(ROOT, false, { info: () => {}, error: console.error })
  // Settings are read before the first fork: a wrong one stops the server with its message, once
  // (a web process that refused its settings after it listened was replaced again and again).
  let n
  let allocator
  try {
    n = webProcesses()
    allocator = webAllocator()
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e))
    process.exit(1)
  }
  // Every other setting, checked by the same zod schema every process uses (lib/server/config.ts).
  const check = spawnSync(process.execPath, [path.join(ROOT, 'bin/parley.mjs'), 'config', 'check'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  })
  if (check.status !== 0) {
    process.stderr.write(`${check.stderr.replace(/^parley: /, '').trimEnd()}\nParley did not start.\n`)
    process.exit(1)
  }
  // The heap limit goes in NODE_OPTIONS (next start retitles its process, hiding its arguments);
  // a limit the operator set already wins.
  const nodeOptions = process.env.NODE_OPTIONS ?? ''
  // The young generation's size and the collector's threads (lib/web-server.mjs, webV8Flags):
  // 2 x 32 MB for one process; 2 x 8 MB each for several, single-threaded when they fill the cores.
  const v8 = webV8Flags(n)
  const given = [...process.execArgv, ...nodeOptions.split(/\s+/)]
  const has = (flag) => given.some((a) => a.startsWith(flag))
  const heapOption = [
    nodeOptions,
    has('--max-old-space-size') ? '' : `--max-old-space-size=${webHeapMb()}`,
    has('--max-semi-space-size') ? '' : `--max-semi-space-size=${v8.semiSpaceMb}`,
  ]
    .filter(Boolean)
    .join(' ')
  // Node refuses this one in NODE_OPTIONS: it goes on the processes' command line (which next start
  // overwrites with its title, so PARLEY_WEB_EXEC_ARGV records it for ps and the tests).
  const execArgv =
    v8.singleThreadedGc && !has('--single-threaded-gc') && !has('--no-single-threaded-gc')
      ? [...process.execArgv, '--single-threaded-gc']
      : process.execArgv
  cluster.setupPrimary({ execArgv })
  let stopping = false
  const fork = (index) => {
    const env = {
      PARLEY_WEB_INDEX: String(index),
      NODE_OPTIONS: heapOption,
      PARLEY_WEB_EXEC_ARGV: execArgv.join(' '),
      // The first keeps the PARLEY_WORKERS it inherits (cluster.fork adds this to process.env).
      ...(index > 0 ? { PARLEY_WORKERS: '0' } : {}),
      // glibc: large blocks (a password hash's 32 MB scrypt buffer, big query results) are mapped
      // and given back when freed instead of staying in a thread's arena, and at most two arenas
      // (no effect with another C library).
      MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      // jemalloc instead (LD_PRELOAD), which returns freed pages to the system.
      ...allocator.env,
    }
    const worker = cluster.fork(env)
    let listened = false
    worker.on('listening', () => {
      listened = true
    })
    worker.on('exit', (code, signal) => {
      if (stopping) return
      // One that never listened, or refused its settings, stops the server: a replacement would too.
      if (!listened || code === CONFIG_EXIT) {
        stop(code || 1)
        return
      }
      console.error(`web process ${index} (pid ${worker.process.pid}) ended (${signal ?? code}); starting another`)
      setTimeout(() => fork(index), 1000)
    })
  }
  const stop = (code) => {
    if (stopping) return
    stopping = true
    const alive = Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead())
    if (alive.length === 0) process.exit(code)
    let left = alive.length
    for (const w of alive) {
      w.once('exit', () => {
        if (--left === 0) process.exit(code)
      })
      w.process.kill('SIGTERM')
    }
  }
  process.on('SIGTERM', () => stop(0))
  process.on('SIGINT', () => stop(0))
  // Metrics: a scrape reaches one web process, which asks here for every process's metrics,
  // aggregated (lib/server/metrics.ts), so counters do not jump between two processes' values.
  const aggregator = new client.AggregatorRegistry()
  cluster.on('message', (worker, message) => {
    if (message?.type !== 'parley:metrics-request') return
    aggregator.clusterMetrics().then(
      (body) => worker.isConnected() && worker.send({ type: 'parley:metrics-response', id: message.id, body }),
      (err) =>
        worker.isConnected() && worker.send({ type: 'parley:metrics-response', id: message.id, error: err.message }),
    )
  })
  for (let i = 0; i < n; i++) fork(i)
} else {
  // Run Next's own CLI in this process, as `next start <args>` would.
  process.argv = [process.argv[0], require.resolve('next/dist/bin/next'), 'start', ...process.argv.slice(2)]
  require('next/dist/bin/next')
}
