import { matchPluginEndpoint } from '@/lib/server/api/endpoints'
import { errorResponse, handle } from '@/lib/server/api/handler'

export const dynamic = 'force-dynamic'

/**
 * Routes no file of its own serves: the endpoints protocol plugins add for their operations (e.g. a
 * protocol's own import), matched by path; another method on such a path is a 405 with `Allow`, and
 * anything else a JSON 404.
 */
async function dispatch(req: Request) {
  const path = new URL(req.url).pathname.replace(/^\/api\/v1/, '')
  let match: Awaited<ReturnType<typeof matchPluginEndpoint>>
  try {
    match = await matchPluginEndpoint(req.method === 'HEAD' ? 'GET' : req.method, path)
  } catch {
    return errorResponse(400, 'The path is not valid percent-encoded UTF-8.')
  }
  if (match.ep) return handle(match.ep)(req, { params: Promise.resolve(match.params) })
  if (match.allow.length) {
    const allow = [...match.allow, ...(match.allow.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].sort().join(', ')
    if (req.method === 'OPTIONS') return new Response(null, { status: 204, headers: { allow } })
    return errorResponse(405, `${req.method} is not allowed here; this path answers ${allow}.`, { headers: { allow } })
  }
  return errorResponse(404, 'No such API route. See /api/v1/openapi.json for the routes that exist.')
}

export {
  dispatch as GET,
  dispatch as HEAD,
  dispatch as POST,
  dispatch as PUT,
  dispatch as PATCH,
  dispatch as DELETE,
  dispatch as OPTIONS,
}
