import { toNextJsHandler } from 'better-auth/next-js'
import { getAuth } from '@/lib/server/auth/auth'
import { withClientAddress } from '@/lib/server/auth/client-address'

export const dynamic = 'force-dynamic'

async function handle(req: Request): Promise<Response> {
  const forwarded = new Request(req, { headers: withClientAddress(req.headers) })
  return toNextJsHandler(getAuth())[req.method === 'GET' ? 'GET' : 'POST'](forwarded)
}

export const GET = handle
export const POST = handle
