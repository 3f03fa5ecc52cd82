import { toNextJsHandler } from 'better-auth/next-js'
import { getAuth } from '@/lib/server/auth/auth'
import { withClientAddress } from '@/lib/server/auth/client-address'

export const dynamic = 'force-dynamic'

/**
 * The better-auth routes Parley uses over HTTP. Everything else better-auth could serve (password
 * change, set or reset, profile updates, sign-up, account deletion, social sign-in…) answers 404:
 * those would skip Parley's password policy, API-key revocation and audit rows. Parley's own
 * operations (settings, admin, CLI) do those jobs.
 */
const ROUTES = new Set(['POST /api/auth/sign-in/email', 'POST /api/auth/sign-out', 'GET /api/auth/get-session'])

async function handle(req: Request): Promise<Response> {
  const { pathname } = new URL(req.url)
  if (!ROUTES.has(`${req.method} ${pathname.replace(/\/+$/, '')}`)) {
    return Response.json({ error: 'Not found.' }, { status: 404 })
  }
  const forwarded = new Request(req, { headers: withClientAddress(req.headers) })
  return toNextJsHandler(getAuth())[req.method === 'GET' ? 'GET' : 'POST'](forwarded)
}

export const GET = handle
export const POST = handle
