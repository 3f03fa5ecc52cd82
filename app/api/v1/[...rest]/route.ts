import { matchPluginEndpoint } from '@/lib/server/api/endpoints'
import { handle, json } from '@/lib/server/api/handler'

export const dynamic = 'force-dynamic'

const notFound = () => json({ error: 'No such API route. See /api/v1/openapi.json for the routes that exist.' }, 404)

/**
 * Routes no file of its own serves: the endpoints protocol plugins add for their operations (e.g. a
 * protocol's own import), matched by path; anything else is a JSON 404.
 */
async function dispatch(req: Request) {
  const path = new URL(req.url).pathname.replace(/^\/api\/v1/, '')
  let match: ReturnType<typeof matchPluginEndpoint>
  try {
    match = matchPluginEndpoint(req.method, path)
  } catch {
    return json({ error: 'The path is not valid percent-encoded UTF-8.' }, 400)
  }
  if (!match) return notFound()
  return handle(match.ep)(req, { params: Promise.resolve(match.params) })
}

export { dispatch as GET, dispatch as POST, notFound as PATCH, notFound as PUT, notFound as DELETE }
