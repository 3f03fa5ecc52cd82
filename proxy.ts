import { getSessionCookie } from 'better-auth/cookies'
import { type NextRequest, NextResponse } from 'next/server'

const PUBLIC = [/^\/sign-in/, /^\/setup/, /^\/api\//, /^\/_next\//, /^\/favicon/, /^\/robots\.txt$/]

/**
 * An optimistic gate: pages without a session cookie go to sign-in at once. The real check (the
 * session row in PostgreSQL, the role's scopes) happens in every page, action and route.
 */
export function proxy(req: NextRequest) {
  const { pathname, search } = req.nextUrl
  const headers = new Headers(req.headers)
  headers.set('x-parley-path', pathname + search)
  if (!PUBLIC.some((re) => re.test(pathname)) && !getSessionCookie(req)) {
    const url = req.nextUrl.clone()
    url.pathname = '/sign-in'
    url.search = pathname === '/' ? '' : `?next=${encodeURIComponent(pathname + search)}`
    return NextResponse.redirect(url)
  }
  return NextResponse.next({ request: { headers } })
}

export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] }
