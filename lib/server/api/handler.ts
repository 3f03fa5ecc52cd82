import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { cookieMutationRefusal } from '@/lib/server/api/csrf'
import type { Endpoint } from '@/lib/server/api/endpoints'
import { claimIdempotencyKey, fingerprintOf, idempotencyKeyOf } from '@/lib/server/api/idempotency'
import { maxUploadBytes, maxUploadMb, uploadTooLargeMessage } from '@/lib/limits.mjs'
import { formDataToObject } from '@/lib/server/form-data'
import { log } from '@/lib/server/log'
import { execute, failureFrom, MAX_INPUT_BYTES } from '@/lib/server/operation'

type RouteContext = { params?: Promise<Record<string, string | string[]> | undefined> }

export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } })
}

/**
 * An error answer of the API: `{ error, fieldErrors? }` (the document's Error schema), with the
 * headers its status promises: `WWW-Authenticate` on 401 (RFC 6750: `error="invalid_token"` when a
 * key was sent), `Retry-After` on 503 (busy: worth retrying shortly).
 */
export function errorResponse(
  status: number,
  message: string,
  opts: { fieldErrors?: Record<string, string[]>; invalidToken?: boolean; headers?: Record<string, string> } = {},
): Response {
  const res = json({ error: message, ...(opts.fieldErrors ? { fieldErrors: opts.fieldErrors } : {}) }, status)
  if (status === 401)
    res.headers.set('www-authenticate', `Bearer realm="Parley"${opts.invalidToken ? ', error="invalid_token"' : ''}`)
  if (status === 503) res.headers.set('retry-after', '1')
  for (const [k, v] of Object.entries(opts.headers ?? {})) res.headers.set(k, v)
  return res
}

const error = (status: number, message: string, fieldErrors?: Record<string, string[]>) =>
  errorResponse(status, message, { fieldErrors })

/**
 * Every HTTP method of a route file, for `export const { GET, HEAD, POST, PUT, PATCH, DELETE,
 * OPTIONS } = methods({ GET: … })`: the given handlers (HEAD as GET, as Next does), OPTIONS with
 * `Allow`, and for the rest a JSON 405 with `Allow` (Next's own 405 has neither).
 */
export function methods<
  H extends { GET?: RouteHandler; POST?: RouteHandler; PATCH?: RouteHandler; DELETE?: RouteHandler },
>(handlers: H) {
  const allow = [...Object.keys(handlers), ...(handlers.GET ? ['HEAD'] : []), 'OPTIONS'].sort().join(', ')
  const notAllowed = (req: Request) =>
    errorResponse(405, `${req.method} is not allowed here; this path answers ${allow}.`, { headers: { allow } })
  type Or<K extends 'GET' | 'POST' | 'PATCH' | 'DELETE'> = H extends { [k in K]: infer F } ? F : typeof notAllowed
  return {
    GET: (handlers.GET ?? notAllowed) as Or<'GET'>,
    HEAD: (handlers.GET ?? notAllowed) as Or<'GET'>,
    POST: (handlers.POST ?? notAllowed) as Or<'POST'>,
    PUT: notAllowed,
    PATCH: (handlers.PATCH ?? notAllowed) as Or<'PATCH'>,
    DELETE: (handlers.DELETE ?? notAllowed) as Or<'DELETE'>,
    OPTIONS: () => new Response(null, { status: 204, headers: { allow } }),
  }
}

type RouteHandler = (...args: never[]) => Response | Promise<Response>

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

/** The operation, and its answer as the output schema has it (an answer that does not fit is our bug: 500). */
async function run(endpoint: Endpoint, actor: NonNullable<Awaited<ReturnType<typeof apiActor>>>, raw: unknown) {
  const result = await execute(endpoint.op, actor, raw)
  if (!result.ok) return error(result.status, result.error, result.fieldErrors)
  const parsed = endpoint.output.safeParse(JSON.parse(JSON.stringify(result.data)))
  if (!parsed.success) {
    log().error({ op: endpoint.op.name, issues: parsed.error.issues }, 'answer does not fit its output schema')
    return error(500, 'Something went wrong on our side; please try again.')
  }
  if (endpoint.answer) return endpoint.answer.respond(parsed.data)
  return json(parsed.data, endpoint.status ?? 200)
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
        if (e instanceof ApiAuthError) return errorResponse(401, e.message, { invalidToken: true })
        throw e
      }
      if (!actor) return error(401, 'Authenticate with "Authorization: Bearer <API key>" or sign in.')
      const idempotency = endpoint.idempotent ? idempotencyKeyOf(req) : { key: null }
      if ('error' in idempotency) return error(400, idempotency.error)
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
      if (!idempotency.key) return await run(endpoint, actor, raw)
      const claim = await claimIdempotencyKey(
        actor.userId,
        idempotency.key,
        await fingerprintOf(req.method, new URL(req.url).pathname, raw),
      )
      if (claim.kind === 'replay') {
        const res = json(claim.body, claim.status)
        res.headers.set('idempotent-replayed', 'true')
        return res
      }
      if (claim.kind === 'other-request')
        return error(422, 'This Idempotency-Key was used for another request (another path or body); use a new key.')
      if (claim.kind === 'in-progress')
        return errorResponse(
          409,
          `A request with this Idempotency-Key is still running (since ${claim.since.toISOString()}); try again shortly.`,
          { headers: { 'retry-after': '1' } },
        )
      let res: Response | undefined
      try {
        res = await run(endpoint, actor, raw)
      } finally {
        await claim.finish(res?.status ?? 500, res?.ok ? await res.clone().json() : null)
      }
      return res
    } catch (err) {
      const f = failureFrom(err, `${endpoint.method} ${endpoint.path}`)
      return error(f.status, f.error, f.fieldErrors)
    }
  }
}
