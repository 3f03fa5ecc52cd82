import pg from 'pg'
import PgBoss from 'pg-boss'
import { settings } from '@/lib/server/config'
import { isDatabaseUnavailable } from '@/lib/server/errors'
import { log } from '@/lib/server/log'

/**
 * The PostgreSQL job queue (pg-boss 10, schema `pgboss` in Parley's database). One instance per
 * process, started lazily: web processes use it to enqueue, worker processes also to work.
 *
 * Recovery: pg-boss has no heartbeat. A job whose process died stays `active` until maintenance
 * (every PARLEY_JOB_MAINTENANCE_SECONDS, in any process) sees it older than its expiry
 * (PARLEY_JOB_EXPIRE_SECONDS) and puts it back for a retry. Jobs are therefore at-least-once, and
 * every handler must be idempotent (a PXP step is: its append is keyed by (session, seq)).
 */
const g = globalThis as unknown as { parleyBoss?: Promise<PgBoss>; parleyQueueDb?: QueueDb }

/** Back-off while the database is unreachable: 0.25 s doubling to 10 s, with jitter. */
export const QUEUE_BACKOFF = { firstMs: 250, maxMs: 10_000 }

/**
 * pg-boss's connection to PostgreSQL (its `db` option): a pool of PARLEY_JOB_POOL_MAX connections
 * named `parley-jobs`, which backs off while the database is unreachable. pg-boss's workers poll
 * every half second and its maintenance runs on a timer, so an outage would otherwise be a stream of
 * refused connections; here the first one that finds the database gone makes every statement wait
 * for the next try (0.25 s, doubling to 10 s, with jitter), one statement probes, and the first
 * success lets them all through again. Each change is logged once.
 */
export class QueueDb {
  readonly pool: pg.Pool
  private nextTry = 0
  private delayMs = 0
  private downSince: number | undefined

  constructor(connectionString: string, max: number) {
    this.pool = new pg.Pool({ connectionString, max, application_name: 'parley-jobs' })
    // An idle connection cut by the server is reported here; the next query opens a new one.
    this.pool.on('error', (err) => log().warn({ err }, 'job queue connection lost'))
  }

  /** Whether statements are held back because the database was found unreachable. */
  get down(): boolean {
    return this.downSince !== undefined
  }

  async executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }> {
    const wait = this.nextTry - Date.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    try {
      const result = await this.pool.query(text, values)
      if (this.downSince !== undefined) {
        log().info({ downSeconds: (Date.now() - this.downSince) / 1000 }, 'job queue: the database is reachable again')
        this.downSince = undefined
      }
      this.delayMs = 0
      this.nextTry = 0
      return result
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        if (this.downSince === undefined) {
          this.downSince = Date.now()
          log().warn({ err }, 'job queue: the database is unreachable; retrying with back-off')
        }
        this.delayMs = Math.min(QUEUE_BACKOFF.maxMs, Math.max(QUEUE_BACKOFF.firstMs, this.delayMs * 2))
        this.nextTry = Math.max(this.nextTry, Date.now() + this.delayMs * (0.5 + Math.random() / 2))
      }
      throw err
    }
  }
}

export const jobSettings = () => {
  const c = settings([
    'PARLEY_JOB_EXPIRE_SECONDS',
    'PARLEY_JOB_MAINTENANCE_SECONDS',
    'PARLEY_JOB_SLICE_MS',
    'PARLEY_WORKERS',
  ])
  return {
    /** A step (one message, with its LLM calls and their retries) must finish within this. */
    expireInSeconds: c.jobExpireSeconds,
    maintenanceIntervalSeconds: c.jobMaintenanceSeconds,
    /**
     * How long one job may keep advancing its session before it re-enqueues it at the back of the
     * queue, so sessions share the workers round robin (a quantum: a few ms of queue work buys fair
     * turns and no idle workers at the end of a run; 0 = one message per job).
     */
    sliceMs: c.jobSliceMs,
    /** Concurrent steps per worker process. */
    workers: c.workers,
  }
}

/**
 * pg-boss 10 fetches a queue's next job `ORDER BY priority DESC, created_on, id LIMIT n` but indexes its
 * queued jobs by (name, start_after) only, so every fetch sorted all of the queue's waiting jobs: 20 ms
 * a fetch with 9,000 queued steps (a labelling run of 3,000 items × 3 slots starting), and so quadratic
 * in the queue's length. An index in the fetch's own order lets it stop at the first row. Created on the
 * partitioned table, so every queue's partition has it, those created later too; once, under an
 * advisory lock (processes start together), and only when missing (no table lock on later starts).
 */
export const FETCH_INDEX = 'parley_job_fetch'
const FETCH_INDEX_SQL = `DO $$ BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('${FETCH_INDEX}'));
  IF to_regclass('pgboss.${FETCH_INDEX}') IS NULL THEN
    CREATE INDEX ${FETCH_INDEX} ON pgboss.job (name, priority DESC, created_on, id) WHERE state < 'active';
  END IF;
END $$`

export function boss(): Promise<PgBoss> {
  g.parleyBoss ??= (async () => {
    const url = process.env.DATABASE_URL
    if (!url) throw new Error('DATABASE_URL is not set.')
    g.parleyQueueDb ??= new QueueDb(url, settings(['PARLEY_JOB_POOL_MAX']).jobPoolMax)
    const db = g.parleyQueueDb
    const b = new PgBoss({
      db,
      schedule: false,
      supervise: true,
      maintenanceIntervalSeconds: jobSettings().maintenanceIntervalSeconds,
    })
    b.on('error', (err) => {
      // While the database is away, QueueDb has said so once; the workers' failed polls say nothing new.
      if (isDatabaseUnavailable(err)) log().debug({ err }, 'job queue error while the database is unreachable')
      else log().error({ err }, 'job queue error')
    })
    await b.start()
    await db.executeSql(FETCH_INDEX_SQL)
    return b
  })().catch((err) => {
    g.parleyBoss = undefined
    throw err
  })
  return g.parleyBoss
}

const created = new Map<string, Promise<void>>()

/** Two processes creating the same queue at once can deadlock in PostgreSQL: the loser tries again. */
async function createQueueRetrying(b: PgBoss, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await b.createQueue(name)
      return
    } catch (err) {
      if ((err as { code?: string }).code !== '40P01' || attempt >= 5) throw err
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 50))
    }
  }
}

/**
 * Create a queue once per process (createQueue is idempotent in the database). The first caller's
 * promise is shared: concurrent createQueue calls for one name deadlock in PostgreSQL.
 */
export async function queue(name: string): Promise<PgBoss> {
  const b = await boss()
  let ready = created.get(name)
  if (!ready) {
    ready = createQueueRetrying(b, name).catch((err) => {
      created.delete(name)
      throw err
    })
    created.set(name, ready)
  }
  await ready
  return b
}

/** Stop this process's queue instance (graceful: in-flight handlers finish first). */
export async function stopBoss(): Promise<void> {
  const p = g.parleyBoss
  const db = g.parleyQueueDb
  g.parleyBoss = undefined
  g.parleyQueueDb = undefined
  created.clear()
  if (p) await (await p).stop({ graceful: true, wait: true, timeout: 10_000 })
  // pg-boss closes only a pool it opened itself.
  await db?.pool.end().catch(() => {})
}

/** Workers of this process by queue, so whoever enqueues can wake them at once (not at their next poll). */
const local = new Map<string, Set<string>>()

export function addLocalWorker(name: string, id: string) {
  const ids = local.get(name) ?? new Set<string>()
  ids.add(id)
  local.set(name, ids)
}

export function removeLocalWorker(name: string, id: string) {
  local.get(name)?.delete(id)
}

/** Wake this process's workers of a queue (after the job's transaction committed). */
export async function wakeWorkers(name: string): Promise<void> {
  const ids = local.get(name)
  if (!ids?.size) return
  const b = await boss()
  for (const id of ids) b.notifyWorker(id)
}

/**
 * Options of the bulk jobs (dataset imports, session creation): they run for a while, so a retry
 * waits a little; their handlers take an advisory lock, so a job that comes back after its expiry
 * while the first is still at work waits for it (a crash releases the lock with its connection).
 */
export const bulkJobOptions = () => ({
  expireInSeconds: jobSettings().expireInSeconds,
  retryLimit: 20,
  retryDelay: 30,
})
