import { json } from '@/lib/server/api/handler'
import { VERSION } from '@/lib/server/api/openapi'
import { db } from '@/lib/server/db'

export const dynamic = 'force-dynamic'

export async function GET() {
  try {
    await db.$queryRaw`SELECT 1`
    return json({ status: 'ok', database: 'ok', version: VERSION })
  } catch {
    return json({ status: 'error', database: 'unreachable', version: VERSION }, 503)
  }
}
