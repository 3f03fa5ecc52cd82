import { readdirSync } from 'node:fs'
import path from 'node:path'
import { NextRequest } from 'next/server'
// Next's own method table for a route module: missing methods answer 405, OPTIONS and HEAD are
// filled in as `next start` fills them.
import { autoImplementMethods } from 'next/dist/server/route-modules/app-route/helpers/auto-implement-methods.js'
import { proxy } from '@/proxy'
import { ROOT } from './processes'

type Handler = (req: Request, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>
interface Route {
  segments: string[]
  file: string
}

/** Every `route.ts` under app/api, as Next's router sees it: its URL segments ([id], [...rest]). */
function routes(): Route[] {
  const base = path.join(ROOT, 'app')
  const out: Route[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name === 'route.ts') out.push({ segments: path.relative(base, dir).split(path.sep), file: p })
    }
  }
  walk(path.join(base, 'api'))
  // Static segments before dynamic ones before catch-alls, as Next ranks them.
  const rank = (s: string) => (s.startsWith('[...') ? 2 : s.startsWith('[') ? 1 : 0)
  return out.sort((a, b) => {
    for (let i = 0; i < Math.max(a.segments.length, b.segments.length); i++) {
      const x = a.segments[i]
      const y = b.segments[i]
      if (x === undefined) return -1
      if (y === undefined) return 1
      if (rank(x) !== rank(y)) return rank(x) - rank(y)
    }
    return 0
  })
}

function match(route: Route, parts: string[]): Record<string, string | string[]> | null {
  const params: Record<string, string | string[]> = {}
  for (const [i, seg] of route.segments.entries()) {
    if (seg.startsWith('[...')) {
      if (parts.length <= i) return null
      params[seg.slice(4, -1)] = parts.slice(i).map(decodeURIComponent)
      return params
    }
    const part = parts[i]
    if (part === undefined) return null
    if (seg.startsWith('[')) params[seg.slice(1, -1)] = decodeURIComponent(part)
    else if (seg !== part) return null
  }
  return parts.length === route.segments.length ? params : null
}

/**
 * The app's API route handlers (app/api/**), dispatched by path as `next start` dispatches them:
 * proxy.ts first (its 400s for unreadable paths), then the route file's method, or Next's own 405,
 * HEAD and OPTIONS. For serving over real HTTP with tests/support/http-route.ts `serveRoute`.
 */
export function apiRouter(): (req: Request) => Promise<Response> {
  const table = routes()
  const modules = new Map<string, Promise<Record<string, Handler>>>()
  return async (req) => {
    const before = proxy(new NextRequest(req.url, { method: req.method, headers: req.headers }))
    if (!before.headers.has('x-middleware-next')) return before
    const parts = new URL(req.url).pathname.split('/').filter(Boolean)
    for (const route of table) {
      const params = match(route, parts)
      if (!params) continue
      if (!modules.has(route.file)) modules.set(route.file, import(route.file))
      const methods = autoImplementMethods((await (modules.get(route.file) as Promise<never>)) as never) as Record<
        string,
        Handler
      >
      const handler = methods[req.method.toUpperCase()]
      if (!handler) return new Response(null, { status: 405 })
      const res = await handler(req, { params: Promise.resolve(params) })
      return req.method.toUpperCase() === 'HEAD' ? new Response(null, res) : res
    }
    return new Response('Not found', { status: 404 })
  }
}
