import { getSessionCookie } from 'better-auth/cookies'
import { type NextRequest, NextResponse } from 'next/server'
import { isCleanText, TEXT_PROBLEM } from '@/lib/server/input'

const PUBLIC = [
  /^\/sign-in/,
  /^\/setup/,
  /^\/reset-password\//,
  /^\/api\//,
  /^\/_next\//,
  /^\/favicon/,
  /^\/robots\.txt$/,
]

/**
 * Why the request's path or query cannot be read, or null: percent-encoding that is not UTF-8
 * (Next would fail to decode the route's params and answer 500), or text the input rules refuse
 * (lib/server/input.ts: U+0000, which PostgreSQL refuses, or an unpaired surrogate).
 */
function unreadable(pathname: string, searchParams: URLSearchParams): string | null {
  for (const segment of pathname.split('/')) {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      return 'The path is not valid percent-encoded UTF-8.'
    }
    if (!isCleanText(decoded)) return `The path: ${TEXT_PROBLEM}`
  }
  for (const [k, v] of searchParams) if (!isCleanText(k) || !isCleanText(v)) return `The query: ${TEXT_PROBLEM}`
  return null
}

/**
 * A server action posted from another origin. Next 16 refuses it too (its CSRF check compares the
 * Origin header's host with X-Forwarded-Host or Host; `experimental.serverActions.allowedOrigins`
 * only widens that list, and Parley sets none), but by throwing, so the caller gets a 500. The same
 * test here answers 403 first. A request without Origin is left to Next, as Next leaves it (no
 * browser sends a cross-site POST without one). Only POSTs Next could treat as an action qualify:
 * a Next-Action header, or a form body to a page.
 */
function foreignServerAction(req: NextRequest): string | null {
  if (req.method !== 'POST') return null
  const type = req.headers.get('content-type') ?? ''
  const maybeAction =
    req.headers.has('next-action') ||
    (!req.nextUrl.pathname.startsWith('/api/') &&
      (type.startsWith('multipart/form-data') || type.startsWith('application/x-www-form-urlencoded')))
  const origin = req.headers.get('origin')
  if (!maybeAction || origin === null) return null
  let originHost: string
  try {
    originHost = origin === 'null' ? 'null' : new URL(origin).host
  } catch {
    return 'The Origin header is not a URL.'
  }
  const host = req.headers.get('x-forwarded-host')?.split(',')[0]?.trim() || req.headers.get('host')
  return originHost === host
    ? null
    : 'Forms of this site can only be sent from this site (cross-origin request refused).'
}

/**
 * The Content-Security-Policy of every response, with this request's nonce (Next's documented
 * nonce recipe: Next reads the nonce from the request's CSP header and puts it on its own scripts).
 *
 * - script-src: only scripts carrying the nonce, and what they load ('strict-dynamic': Next's chunks).
 *   No inline script, eval or other origin. `next dev` needs 'unsafe-eval' for React's debugging.
 *   No 'wasm-unsafe-eval': RDKit runs on the server and sends SVG; the browser runs no WebAssembly.
 * - style-src 'unsafe-inline': React `style` attributes (recharts' SVG, the progress and probability
 *   bars, the X-ray viewer's transform, RDKit's SVG) cannot carry a nonce, and a nonce in style-src
 *   would switch 'unsafe-inline' off for them. Styles cannot run code; stylesheets still only from
 *   this origin (Tailwind's CSS file).
 * - img-src 'self' data: blob: dataset images come from /api/assets; data: URLs and blob: previews.
 * - connect-src 'self': fetches and the server-sent events of /api/live and /api/llm/stream.
 * - object-src 'none', base-uri 'self', form-action 'self', frame-ancestors 'none' (no framing).
 */
export function contentSecurityPolicy(nonce: string, opts: { dev?: boolean; https?: boolean } = {}): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${opts.dev ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "media-src 'self'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(opts.https ? ['upgrade-insecure-requests'] : []),
  ].join('; ')
}

/**
 * Sets the CSP (above) and sends visitors without a session cookie to sign-in at once: an
 * optimistic gate; the real check (the session row in PostgreSQL, the role's scopes) happens in
 * every page, action and route. Before that, requests no route could answer sensibly get their 4xx
 * here (above).
 */
export function proxy(req: NextRequest) {
  const foreign = foreignServerAction(req)
  if (foreign)
    return new NextResponse(foreign, { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  const { pathname, search } = req.nextUrl
  // Every path and query, pages and API alike, before any route decodes them: a clear 400.
  const bad = unreadable(pathname, req.nextUrl.searchParams)
  if (bad)
    return pathname.startsWith('/api/')
      ? NextResponse.json({ error: bad }, { status: 400 })
      : new NextResponse(`Bad request. ${bad}`, {
          status: 400,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        })
  if (!PUBLIC.some((re) => re.test(pathname)) && !getSessionCookie(req)) {
    const url = req.nextUrl.clone()
    url.pathname = '/sign-in'
    url.search = pathname === '/' ? '' : `?next=${encodeURIComponent(pathname + search)}`
    return NextResponse.redirect(url)
  }
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64')
  const csp = contentSecurityPolicy(nonce, {
    dev: process.env.NODE_ENV === 'development',
    https: process.env.BETTER_AUTH_URL?.startsWith('https:') ?? false,
  })
  const headers = new Headers(req.headers)
  headers.set('x-parley-path', pathname + search)
  headers.set('x-nonce', nonce)
  headers.set('content-security-policy', csp)
  const res = NextResponse.next({ request: { headers } })
  res.headers.set('content-security-policy', csp)
  return res
}

export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] }
