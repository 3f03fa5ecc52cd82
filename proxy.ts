import { getSessionCookie } from 'better-auth/cookies'
import { type NextRequest, NextResponse } from 'next/server'

const PUBLIC = [/^\/sign-in/, /^\/setup/, /^\/api\//, /^\/_next\//, /^\/favicon/, /^\/robots\.txt$/]

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
 * every page, action and route.
 */
export function proxy(req: NextRequest) {
  const { pathname, search } = req.nextUrl
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
