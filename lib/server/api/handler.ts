import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { cookieMutationRefusal } from '@/lib/server/api/csrf'
import type { Endpoint } from '@/lib/server/api/endpoints'
import { maxUploadBytes, maxUploadMb, uploadTooLargeMessage } from '@/lib/limits.mjs'
import { formDataToObject } from '@/lib/server/form-data'
import { execute, failureFrom, MAX_INPUT_BYTES } from '@/lib/server/operation'

type RouteContext = { params?: Promise<Record<string, string | string[]> | undefined> }

export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } })
}

const error = (status: number, message: string, fieldErrors?: Record<string, string[]>) => {
  const res = json({ error: message, ...(fieldErrors ? { fieldErrors } : {}) }, status)
  // Busy (the database had no room in time): worth retrying shortly.
  if (status === 503) res.headers.set('retry-after', '1')
  return res
}

async function readBody(req: Request): Promise<{ ok: true; value: unknown } | { ok: false; res: Response }> {
  const declared = Number(req.headers.get('content-length') ?? 0)
  if (declared > MAX_INPUT_BYTES)
    return { ok: false, res: error(413, `Request body too large (limit ${MAX_INPUT_BYTES / 1024} KiB).`) }
  const text = await req.text()
  if (Buffer.byteLength(text) > MAX_INPUT_BYTES) {
    return { ok: false, res: error(413, `Request body too large (limit ${MAX_INPUT_BYTES / 1024} KiB).`) }
  }
  if (!text.trim()) return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, res: error(400, 'The request body is not valid JSON.') }
  }
}

/** A multipart/form-data body (uploads): fields as strings, files as File objects, repeated keys as arrays. */
async function readMultipart(req: Request): Promise<{ ok: true; value: unknown } | { ok: false; res: Response }> {
  const type = (req.headers.get('content-type') ?? '').toLowerCase()
  if (!type.startsWith('multipart/form-data'))
    return { ok: false, res: error(415, 'Send the upload as multipart/form-data.') }
  // The upload limit plus room for the multipart envelope; the operation checks the files themselves.
  const declared = Number(req.headers.get('content-length') ?? 0)
  if (declared > maxUploadBytes() + 2 * 1024 * 1024)
    return { ok: false, res: error(413, uploadTooLargeMessage(declared, maxUploadMb())) }
  try {
    return { ok: true, value: formDataToObject(await req.formData()) }
  } catch {
    return { ok: false, res: error(400, 'The request body is not valid multipart/form-data.') }
  }
}

function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of url.searchParams) out[k] = v
  return out
}

/** Binds an endpoint to a Next route handler: auth → input → operation → output schema → JSON. */
export function handle(endpoint: Endpoint) {
  return async (req: Request, ctx: RouteContext): Promise<Response> => {
    try {
      const refusal = cookieMutationRefusal(req)
      if (refusal) return error(refusal.status, refusal.error)
      let actor: Awaited<ReturnType<typeof apiActor>>
      try {
        actor = await apiActor(req)
      } catch (e) {
        if (e instanceof ApiAuthError) return error(401, e.message)
        throw e
      }
      if (!actor) return error(401, 'Authenticate with "Authorization: Bearer <API key>" or sign in.')
      const params = Object.fromEntries(
        Object.entries((await ctx?.params) ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.join('/') : v]),
      )
      let raw: unknown = {}
      if (endpoint.source === 'query') raw = queryObject(new URL(req.url))
      if (endpoint.source === 'body' || endpoint.source === 'multipart') {
        const body = endpoint.source === 'body' ? await readBody(req) : await readMultipart(req)
        if (!body.ok) return body.res
        raw = body.value
      }
      if (Object.keys(params).length) {
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
          return error(400, 'The request body must be a JSON object.')
        }
        raw = { ...(raw as object), ...params }
      }
      const result = await execute(endpoint.op, actor, raw)
      if (!result.ok) return error(result.status, result.error, result.fieldErrors)
      const body = endpoint.output.parse(JSON.parse(JSON.stringify(result.data)))
      return json(body, endpoint.status ?? 200)
    } catch (err) {
      const f = failureFrom(err, `${endpoint.method} ${endpoint.path}`)
      return error(f.status, f.error, f.fieldErrors)
    }
  }
}
