import { randomUUID } from 'node:crypto'
import os from 'node:os'
import { settings } from '@/lib/server/config'
import { sql } from '@/lib/server/db'
import { isDatabaseUnavailable } from '@/lib/server/errors'
import { boss } from '@/lib/server/jobs/queue'
import { log } from '@/lib/server/log'

/**
 * The life of a process that works the job queues (the web server, `parley worker`): heartbeats,
 * readiness and graceful shutdown.
 *
 * pg-boss has no heartbeat: a job whose process died stays `active` until its expiry
 * (PARLEY_JOB_EXPIRE_SECONDS, 600 s, which must outlast the longest step). So every process that
 * works a queue keeps a `WorkerProcess` row: every PARLEY_HEARTBEAT_SECONDS (2 s) it writes `seenAt`
 * and the jobs it is working, and hands back to the queue (pg-boss `fail`, which retries them after
 * their retry delay, 1 s for steps) every active job that started more than five heartbeats ago and
 * that no process seen within five heartbeats lists: its process died (or never had a heartbeat). A
 * SIGKILLed process's sessions thus resume on another process within about 5 × 2 + 2 + 1 s, not
 * 10 minutes. A process that is alive but stalled that long gets its job run twice, which steps
 * tolerate (the (session, seq) key).
 *
 * Shutdown (SIGTERM/SIGINT, {@link installShutdown}): readiness turns to 503 at once, the workers
 * stop taking jobs and each running job hands its session back to the queue after the step in
 * flight; live streams close; the process exits when that is done or after PARLEY_SHUTDOWN_SECONDS
 * (20 s), handing back whatever is still running first.
 */

type JobRef = { name: string; id: string }

interface State {
  id: string
  kind: string
  draining: boolean
  /** The jobs this process is working, by id. */
  active: Map<string, JobRef>
  /** The queues this process works (whose orphans it looks for). */
  queues: Set<string>
  timer?: NodeJS.Timeout
  lastBeat?: number
  shutdownHooks: Array<{ name: string; fn: () => Promise<void> | void }>
  shuttingDown?: Promise<void>
  /** Resolves when the drain grace after SIGTERM is over (see installShutdown's drainMs). */
  drainOver: Promise<void>
  endDrain: () => void
  /** The drain grace of this process's SIGTERM (installShutdown), 0 without one. */
  drainMs?: number
}

const g = globalThis as unknown as { parleyProcess?: State }

function state(): State {
  if (!g.parleyProcess) {
    let endDrain = () => {}
    const drainOver = new Promise<void>((r) => {
      endDrain = r
    })
    g.parleyProcess = {
      id: randomUUID(),
      kind: process.env.PARLEY_PROCESS ?? 'web',
      draining: false,
      active: new Map(),
      queues: new Set(),
      shutdownHooks: [],
      drainOver,
      endDrain,
    }
  }
  return g.parleyProcess
}

/**
 * Resolves once the drain grace after SIGTERM is over (at once when shutdown began without one):
 * what must keep serving while a load balancer notices the 503 (live streams) waits for it.
 */
export const afterDrain = (): Promise<void> => state().drainOver

/** True once shutdown began: workers finish their step and take nothing new. */
export const isDraining = () => state().draining

/** Ready to take traffic: not shutting down (the database is checked by the caller). */
export const isReady = () => !state().draining

/** Seconds since the last successful heartbeat (undefined before the first). */
export function heartbeatAge(): number | undefined {
  const t = state().lastBeat
  return t === undefined ? undefined : (Date.now() - t) / 1000
}

/** This process works a queue: it beats, and looks for that queue's orphaned jobs. */
export function worksQueue(name: string): void {
  state().queues.add(name)
  void startHeartbeat()
}

/** A worker took a job / is done with it (so a heartbeat lists it and shutdown can hand it back). */
export function jobStarted(name: string, id: string): void {
  state().active.set(id, { name, id })
}
export function jobFinished(id: string): void {
  state().active.delete(id)
}
export const activeJobCount = () => state().active.size

/** Run on shutdown, in order of registration (live streams, workers …). */
export function onShutdown(name: string, fn: () => Promise<void> | void): void {
  state().shutdownHooks.push({ name, fn })
}

async function beat(): Promise<void> {
  const s = state()
  const { heartbeatSeconds } = settings(['PARLEY_HEARTBEAT_SECONDS'])
  const jobs = JSON.stringify([...s.active.values()])
  await sql().query(
    `INSERT INTO "WorkerProcess" (id, kind, host, pid, jobs, draining) VALUES ($1, $2, $3, $4, $5::jsonb, $6)
     ON CONFLICT (id) DO UPDATE SET "seenAt" = now(), jobs = EXCLUDED.jobs, draining = EXCLUDED.draining`,
    [s.id, s.kind, os.hostname(), process.pid, jobs, s.draining],
  )
  s.lastBeat = Date.now()
  await reapSilent(heartbeatSeconds * 5)
}

/**
 * Hand back orphaned jobs: active jobs of the queues this process works that started more than
 * `silentSeconds` ago and that no process with a heartbeat within `silentSeconds` lists (its
 * process died, or never had a heartbeat). A live process lists every job it holds at each beat,
 * so only a job whose process stopped beating qualifies. Any process does this; pg-boss `fail`
 * decides once. Rows of processes silent that long are removed. Returns how many jobs went back.
 */
export async function reapSilent(silentSeconds: number): Promise<number> {
  const queues = [...state().queues]
  if (!queues.length) return 0
  const { rows } = await sql().query<{ name: string; id: string }>(
    `SELECT j.name, j.id::text AS id FROM pgboss.job j
     WHERE j.state = 'active' AND j.name = ANY($1) AND j.started_on < now() - make_interval(secs => $2)
       AND NOT EXISTS (
         SELECT 1 FROM "WorkerProcess" w
         WHERE w."seenAt" >= now() - make_interval(secs => $2)
           AND w.jobs @> jsonb_build_array(jsonb_build_object('id', j.id::text)))`,
    [queues, silentSeconds],
  )
  await sql().query(`DELETE FROM "WorkerProcess" WHERE "seenAt" < now() - make_interval(secs => $1)`, [
    silentSeconds * 2,
  ])
  const n = await handBack(rows, 'its process stopped answering')
  if (n) log().warn({ jobs: n }, 'handed back the jobs of silent processes')
  return n
}

/** Put jobs back on their queue for a retry (only those still active; pg-boss `fail` retries them). */
async function handBack(jobs: JobRef[], reason: string): Promise<number> {
  if (!jobs.length) return 0
  const b = await boss()
  const byName = new Map<string, string[]>()
  for (const j of jobs) byName.set(j.name, [...(byName.get(j.name) ?? []), j.id])
  for (const [name, ids] of byName) await b.fail(name, ids, { message: reason } as never)
  return jobs.length
}

/** Start the heartbeat of this process (idempotent); resolves after the first beat. */
export async function startHeartbeat(kind?: string): Promise<void> {
  const s = state()
  if (kind) s.kind = kind
  if (s.timer) return
  const { heartbeatSeconds } = settings(['PARLEY_HEARTBEAT_SECONDS'])
  s.timer = setInterval(() => {
    beat().catch((err) => log().warn({ err }, 'heartbeat failed'))
  }, heartbeatSeconds * 1000)
  s.timer.unref()
  await beat().catch((err) => log().warn({ err }, 'heartbeat failed'))
}

/** Stop this process's heartbeat and remove its row (shutdown and releaseProcessResources). */
export async function stopHeartbeat(): Promise<void> {
  const s = state()
  if (s.timer) clearInterval(s.timer)
  s.timer = undefined
  await sql()
    .query(`DELETE FROM "WorkerProcess" WHERE id = $1`, [s.id])
    .catch(() => {})
}

/**
 * Drain and stop: readiness 503, hooks (workers hand back, streams close), heartbeat row removed.
 * Whatever a hook did not finish within `deadlineMs` is handed back to the queue. Idempotent.
 */
export function shutdown(deadlineMs = settings(['PARLEY_SHUTDOWN_SECONDS']).shutdownSeconds * 1000): Promise<void> {
  const s = state()
  s.shuttingDown ??= (async () => {
    s.draining = true
    if (!s.drainMs) s.endDrain()
    const started = Date.now()
    log().info({ activeJobs: s.active.size }, 'shutting down: finishing the steps in flight')
    await beat().catch(() => {})
    const hooks = Promise.all(
      s.shutdownHooks.map(async (h) => {
        try {
          await h.fn()
        } catch (err) {
          log().error({ err, hook: h.name }, 'shutdown step failed')
        }
      }),
    )
    let timer: NodeJS.Timeout | undefined
    await Promise.race([hooks, new Promise<void>((r) => (timer = setTimeout(r, deadlineMs)))])
    clearTimeout(timer)
    const left = [...s.active.values()]
    if (left.length) {
      const n = await handBack(left, 'its process shut down').catch(() => 0)
      log().warn({ jobs: n }, 'handed back the jobs still running at the shutdown deadline')
    }
    await stopHeartbeat()
    log().info({ ms: Date.now() - started }, 'shut down')
  })()
  return s.shuttingDown
}

/**
 * On SIGTERM/SIGINT, {@link shutdown}, then exit. `next start` has its own handler that closes the
 * HTTP server and exits as soon as no connection is open; until this shutdown is done, its
 * `process.exit` waits for it (so the steps in flight are handed back, not cut off). After the
 * shutdown, the process exits by itself `graceMs` later if nobody else did (0 for `parley worker`;
 * the web server gives Next that long to finish the requests in flight).
 *
 * `drainMs` (the web server, PARLEY_DRAIN_SECONDS): readiness answers 503 at once, but the signal
 * handlers registered before this one (next start's, which stops accepting connections) run only
 * `drainMs` later, so a load balancer sees the 503 and stops sending traffic before connections are
 * refused; meanwhile every other request is served as usual, and live streams stay open until then
 * ({@link afterDrain}). Call it after those handlers exist (instrumentation.ts runs after next start
 * installed its own).
 */
export function installShutdown(opts: { graceMs: number; exitCode?: number; drainMs?: number }): void {
  const s = state() as State & { installed?: boolean }
  if (s.installed) return
  s.installed = true
  const drainMs = opts.drainMs ?? 0
  s.drainMs = drainMs
  // The handlers already there (next start's), run after the drain instead of at once.
  const deferred = new Map<NodeJS.Signals, Array<(signal: NodeJS.Signals) => void>>()
  if (drainMs > 0) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const others = process.listeners(signal) as Array<(signal: NodeJS.Signals) => void>
      deferred.set(signal, others)
      for (const l of others) process.removeListener(signal, l)
    }
  }
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    // A repeated signal (Ctrl+C also reaches the web processes of a cluster its primary stops) changes nothing.
    if (signalled) return
    signalled = true
    const realExit = process.exit.bind(process)
    let exitCode: number | undefined
    const done = shutdown().catch(() => {})
    process.exit = ((code?: number) => {
      exitCode = code ?? exitCode
      void done.then(() => realExit(exitCode))
      return undefined as never
    }) as typeof process.exit
    const drained = new Promise<void>((resolve) =>
      setTimeout(() => {
        s.endDrain()
        for (const l of deferred.get(signal) ?? []) l(signal)
        resolve()
      }, drainMs),
    )
    if (drainMs > 0)
      log().info({ drainMs }, 'draining: readiness answers 503; connections are taken until the drain ends')
    const fallback = opts.exitCode ?? (signal === 'SIGINT' ? 130 : 143)
    void Promise.all([done, drained]).then(() => setTimeout(() => realExit(exitCode ?? fallback), opts.graceMs).unref())
    // A hard bound on top of the deadline.
    setTimeout(
      () => realExit(exitCode ?? 1),
      drainMs + settings(['PARLEY_SHUTDOWN_SECONDS']).shutdownSeconds * 1000 + 5000,
    ).unref()
  }
  if (drainMs > 0) {
    // In place of next start's handlers, which ignored repeated signals too: never the default kill.
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  } else {
    process.once('SIGTERM', onSignal)
    process.once('SIGINT', onSignal)
  }
}

/**
 * `parley worker` lives through a database outage. pg-boss completes and fails a finished job
 * without awaiting it, so a connection refused at that moment is a promise rejection nobody handles,
 * which ends a Node process (Next logs and survives them in the web process). Here one that says the
 * database is unreachable is logged and survived: the job stays active, and the heartbeats hand it
 * back once the database is back (the queue itself retries with back-off, jobs/queue.ts). Any other
 * unhandled rejection is logged and ends the process with code 1, as Node would.
 */
export function surviveDatabaseOutages(): void {
  const s = state() as State & { outageGuard?: boolean }
  if (s.outageGuard) return
  s.outageGuard = true
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      log().warn({ err: reason }, 'the database is unreachable; carrying on (the queue retries)')
      return
    }
    log().fatal({ err: reason }, 'unhandled promise rejection')
    process.exit(1)
  })
}
