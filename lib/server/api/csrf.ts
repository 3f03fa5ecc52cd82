import { trustedOrigins } from '@/lib/server/auth/auth'

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export type Refusal = { status: 403 | 415; error: string }

/**
 * A browser sends the session cookie with requests that any page of the same site starts (another
 * port of the same host included: SameSite=Lax does not tell ports apart), and a plain form or a
 * no-cors fetch can POST `text/plain`. So a mutation authenticated by the cookie must come from the
 * app's own origin (the `Origin` header in the trusted origins, or, when a browser sends no Origin,
 * `Sec-Fetch-Site: same-origin`) and must declare `Content-Type: application/json`, which a page on
 * another origin cannot send without a CORS preflight that Parley never answers. Callers with an
 * `Authorization` header (API keys) never use the cookie and are not affected.
 */
export function cookieMutationRefusal(req: Request, origins: string[] = trustedOrigins()): Refusal | null {
  if (!MUTATING.has(req.method.toUpperCase())) return null
  if (req.headers.get('authorization')) return null
  if (!req.headers.get('cookie')) return null
  const origin = req.headers.get('origin')
  if (origin ? !origins.includes(origin) : req.headers.get('sec-fetch-site') !== 'same-origin') {
    return {
      status: 403,
      error: origin
        ? `Requests signed in with the session cookie must come from this app; origin ${origin} is not one of its origins. Scripts use an API key ("Authorization: Bearer pk_…").`
        : 'Requests signed in with the session cookie must send the Origin header of this app. Scripts use an API key ("Authorization: Bearer pk_…").',
    }
  }
  const type = (req.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/json') {
    return { status: 415, error: 'Send the request body as JSON with "Content-Type: application/json".' }
  }
  return null
}
