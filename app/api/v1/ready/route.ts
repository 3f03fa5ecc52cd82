import { json, methods } from '@/lib/server/api/handler'
import { VERSION } from '@/lib/server/api/openapi'
import { db } from '@/lib/server/db'
import { isReady } from '@/lib/server/processes'
import { sandboxProblems } from '@/lib/tasks/sandbox'

export const dynamic = 'force-dynamic'

/**
 * GET /api/v1/ready — readiness for a load balancer: 200 while this instance takes traffic; 503 once
 * it is shutting down (SIGTERM), cannot reach the database, or cannot start a worker thread it
 * started before (RDKit's, the regex MATCH one: `workers` names why; each ask tries again, so it
 * recovers by itself). `/api/v1/health` is liveness (the process answers and reaches the database)
 * and stays 200 while a shutdown drains.
 */
async function ready() {
  if (!isReady()) return json({ status: 'draining', version: VERSION }, 503)
  const workers = await sandboxProblems()
  if (workers.length) return json({ status: 'error', workers, version: VERSION }, 503)
  try {
    await db.$queryRaw`SELECT 1`
    return json({ status: 'ready', database: 'ok', version: VERSION })
  } catch {
    return json({ status: 'error', database: 'unreachable', version: VERSION }, 503)
  }
}

export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({ GET: ready })
