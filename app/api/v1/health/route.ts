import { json, methods } from '@/lib/server/api/handler'
import { VERSION } from '@/lib/server/api/openapi'
import { db } from '@/lib/server/db'

export const dynamic = 'force-dynamic'

async function health() {
  try {
    await db.$queryRaw`SELECT 1`
    return json({ status: 'ok', database: 'ok', version: VERSION })
  } catch {
    return json({ status: 'error', database: 'unreachable', version: VERSION }, 503)
  }
}

export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({ GET: health })
