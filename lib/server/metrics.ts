import cluster from 'node:cluster'
import { randomUUID, timingSafeEqual } from 'node:crypto'
import client from 'prom-client'
import { setLlmObserver } from '@/lib/llm/client'
import { settings } from '@/lib/server/config'
import { poolUse, sql } from '@/lib/server/db'
import { liveStats } from '@/lib/server/live'
import { activeJobCount, heartbeatAge } from '@/lib/server/processes'

/**
 * Prometheus metrics of this process (prom-client), served at `/api/v1/metrics` (web) and on the
 * worker's health port (`parley worker`), both only with `Authorization: Bearer
 * $PARLEY_METRICS_TOKEN` (without the setting they answer 404). Names start with `parley_`:
 *
 * - `parley_queue_jobs{queue,state}`: jobs waiting (`created`, `retry`) and running (`active`) on
 *   every queue, read from PostgreSQL at scrape time (the same figure from every process);
 * - `parley_jobs_active`: jobs this process is working;
 * - `parley_llm_in_flight{connection}`, `parley_llm_attempts_total{connection,outcome}`,
 *   `parley_llm_rate_limited_total{connection}` (429s), `parley_llm_attempt_seconds{connection}`
 *   (a histogram of call latency), per LLM connection id, in this process;
 * - `parley_live_subscribers`, `parley_live_listener_up`, `parley_live_reconnects_total`;
 * - `parley_db_pool_connections{pool,state}` (`prisma`, `hot`; total, idle, waiting, max);
 * - `parley_heartbeat_age_seconds`, and Node's defaults (`parley_process_*`, `parley_nodejs_*`).
 *
 * Several web processes share one port (scripts/serve.mjs), so a scrape lands on any of them: it
 * answers for all of them, aggregated by the cluster's primary (prom-client's AggregatorRegistry:
 * counters and histograms summed, each gauge by its `aggregator`), so counters never jump between
 * two processes' values. `parley worker` and a single `next start` answer for themselves.
 */
const g = globalThis as unknown as { parleyMetrics?: client.Registry }

export function registry(): client.Registry {
  if (g.parleyMetrics) return g.parleyMetrics
  const r = new client.Registry()
  client.collectDefaultMetrics({ register: r, prefix: 'parley_' })
  new client.Gauge({
    name: 'parley_queue_jobs',
    help: 'Jobs on the queues by state (created and retry are waiting, active are running)',
    labelNames: ['queue', 'state'],
    registers: [r],
    // Read from the database: every process reports the same figure.
    aggregator: 'max',
    async collect() {
      this.reset()
      try {
        const { rows } = await sql().query<{ name: string; state: string; n: string }>(
          `SELECT name, state::text AS state, count(*) AS n FROM pgboss.job
           WHERE state IN ('created', 'retry', 'active') GROUP BY name, state`,
        )
        for (const row of rows) this.set({ queue: row.name, state: row.state }, Number(row.n))
      } catch {
        // no queue schema yet
      }
    },
  })
  new client.Gauge({
    name: 'parley_jobs_active',
    help: 'Jobs this process is working',
    registers: [r],
    collect() {
      this.set(activeJobCount())
    },
  })
  const inFlight = new client.Gauge({
    name: 'parley_llm_in_flight',
    help: 'LLM calls in flight from this process, per connection',
    labelNames: ['connection'],
    registers: [r],
  })
  const attempts = new client.Counter({
    name: 'parley_llm_attempts_total',
    help: 'LLM HTTP attempts from this process, per connection and outcome (ok or the error kind)',
    labelNames: ['connection', 'outcome'],
    registers: [r],
  })
  const limited = new client.Counter({
    name: 'parley_llm_rate_limited_total',
    help: '429 answers per connection',
    labelNames: ['connection'],
    registers: [r],
  })
  const latency = new client.Histogram({
    name: 'parley_llm_attempt_seconds',
    help: 'Latency of LLM HTTP attempts per connection',
    labelNames: ['connection'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [r],
  })
  setLlmObserver({
    attemptStarted(connection) {
      inFlight.inc({ connection })
    },
    attemptEnded(connection, o) {
      inFlight.dec({ connection })
      attempts.inc({ connection, outcome: o.ok ? 'ok' : (o.kind ?? 'error') })
      if (o.httpStatus === 429) limited.inc({ connection })
      latency.observe({ connection }, o.ms / 1000)
    },
  })
  new client.Gauge({
    name: 'parley_live_subscribers',
    help: 'Live-update streams this process serves',
    registers: [r],
    collect() {
      this.set(liveStats().subscribers)
    },
  })
  new client.Gauge({
    name: 'parley_live_listener_up',
    help: '1 while the LISTEN connection is up',
    registers: [r],
    collect() {
      this.set(liveStats().up ? 1 : 0)
    },
  })
  new client.Gauge({
    name: 'parley_live_reconnects_total',
    help: 'Times the LISTEN connection was re-established',
    registers: [r],
    collect() {
      this.set(liveStats().reconnects)
    },
  })
  new client.Gauge({
    name: 'parley_db_pool_connections',
    help: 'Database pool connections of this process by pool and state (total, idle, waiting clients, max)',
    labelNames: ['pool', 'state'],
    registers: [r],
    collect() {
      this.reset()
      for (const [pool, use] of Object.entries(poolUse())) {
        if (!use) continue
        for (const [state, v] of Object.entries(use)) this.set({ pool, state }, v)
      }
    },
  })
  new client.Gauge({
    name: 'parley_heartbeat_age_seconds',
    help: 'Seconds since this process last wrote its heartbeat (absent when it works no queue)',
    registers: [r],
    aggregator: 'max',
    collect() {
      const age = heartbeatAge()
      if (age !== undefined) this.set(age)
    },
  })
  g.parleyMetrics = r
  if (cluster.isWorker) {
    // Answer the primary's requests for this process's metrics (prom-client's cluster protocol).
    new client.AggregatorRegistry()
    client.AggregatorRegistry.setRegistries([r])
  }
  return r
}

/** The messages between a web process and the primary of scripts/serve.mjs (its `metricsAggregator`). */
export const CLUSTER_METRICS_REQUEST = 'parley:metrics-request'
export const CLUSTER_METRICS_RESPONSE = 'parley:metrics-response'

type ClusterReply = { type: string; id: string; body?: string; error?: string }
const pending = globalThis as unknown as { parleyMetricsWaiting?: Map<string, (r: ClusterReply) => void> }

/** The metrics of every web process, aggregated by the primary of scripts/serve.mjs. */
function clusterMetrics(timeoutMs = 10_000): Promise<string> {
  if (!pending.parleyMetricsWaiting) {
    const waiting = new Map<string, (r: ClusterReply) => void>()
    pending.parleyMetricsWaiting = waiting
    process.on('message', (m: ClusterReply) => {
      if (m?.type === CLUSTER_METRICS_RESPONSE) waiting.get(m.id)?.(m)
    })
  }
  const waiting = pending.parleyMetricsWaiting
  const id = randomUUID()
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id)
      reject(new Error('the other web processes did not answer in time'))
    }, timeoutMs)
    waiting.set(id, (m) => {
      clearTimeout(timer)
      waiting.delete(id)
      if (m.error !== undefined || m.body === undefined) reject(new Error(m.error ?? 'no metrics'))
      else resolve(m.body)
    })
    process.send?.({ type: CLUSTER_METRICS_REQUEST, id })
  })
}

/** Whether this process is one of several web processes under scripts/serve.mjs. */
const inWebCluster = () => cluster.isWorker && process.env.PARLEY_WEB_INDEX !== undefined && !!process.send

/** Start counting (the LLM observer) at process start, so nothing before the first scrape is missed. */
export function installMetrics(): void {
  registry()
}

/** Whether an Authorization header carries the metrics token (constant-time). Undefined: no token set. */
export function metricsAuthorized(authorization: string | null): boolean | undefined {
  const token = settings(['PARLEY_METRICS_TOKEN']).PARLEY_METRICS_TOKEN
  if (!token) return undefined
  const given = Buffer.from(authorization?.replace(/^Bearer\s+/i, '') ?? '')
  const want = Buffer.from(token)
  return given.length === want.length && timingSafeEqual(given, want)
}

/** The scrape: `{ status, body, contentType }` for a request with this Authorization header. */
export async function scrape(
  authorization: string | null,
): Promise<{ status: number; body: string; contentType: string }> {
  const ok = metricsAuthorized(authorization)
  if (ok === undefined) return { status: 404, body: 'Not found.\n', contentType: 'text/plain' }
  if (!ok)
    return { status: 401, body: 'Send Authorization: Bearer <PARLEY_METRICS_TOKEN>.\n', contentType: 'text/plain' }
  const r = registry()
  if (inWebCluster()) {
    try {
      return { status: 200, body: await clusterMetrics(), contentType: r.contentType }
    } catch (err) {
      // Better no sample than one process's counters in place of all of them (a jump back).
      return { status: 503, body: `Metrics unavailable: ${(err as Error).message}.\n`, contentType: 'text/plain' }
    }
  }
  return { status: 200, body: await r.metrics(), contentType: r.contentType }
}
