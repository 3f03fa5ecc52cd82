import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { settings } from '@/lib/server/config'
import { sql } from '@/lib/server/db'
import { scrape } from '@/lib/server/metrics'
import { activeJobCount, heartbeatAge, isReady } from '@/lib/server/processes'
import { sandboxProblems } from '@/lib/tasks/sandbox'

/**
 * The health endpoint of `parley worker` (it has no web server), on PARLEY_WORKER_HEALTH_PORT
 * (bound to HOST, 127.0.0.1 by default): `GET /health` answers 200 with the jobs in flight while the
 * worker reaches the database and its heartbeat is fresh, 503 while it shuts down, when either
 * fails, or while a worker thread it started before (RDKit's, regex MATCH) cannot be started again; `GET /metrics` is the Prometheus scrape (with the metrics token, as on the web server).
 */
export async function startWorkerHealth(
  port: number | undefined,
): Promise<{ port: number; close(): Promise<void> } | undefined> {
  if (!port) return undefined
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && path === '/metrics') {
      const m = await scrape(req.headers.authorization ?? null)
      res.writeHead(m.status, { 'content-type': m.contentType }).end(m.body)
      return
    }
    if (req.method !== 'GET' || path !== '/health') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found.\n')
      return
    }
    const age = heartbeatAge()
    let database: 'ok' | 'unreachable' = 'ok'
    try {
      await sql().query('SELECT 1')
    } catch {
      database = 'unreachable'
    }
    const fresh = age !== undefined && age < settings(['PARLEY_HEARTBEAT_SECONDS']).heartbeatSeconds * 3
    const workers = await sandboxProblems()
    const status = !isReady() ? 'draining' : database === 'ok' && fresh && !workers.length ? 'ok' : 'error'
    res.writeHead(status === 'ok' ? 200 : 503, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        status,
        database,
        heartbeatAgeSeconds: age ?? null,
        activeJobs: activeJobCount(),
        ...(workers.length ? { workers } : {}),
      }),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, process.env.HOST ?? '127.0.0.1', resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}
