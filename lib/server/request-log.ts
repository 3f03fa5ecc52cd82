import diagnostics from 'node:diagnostics_channel'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { enterRequest, log, requestIdFrom } from '@/lib/server/log'

export const REQUEST_ID_HEADER = 'x-request-id'
const INSTALLED = Symbol.for('parley.requestIds')
const g = globalThis as unknown as { [INSTALLED]?: boolean }

/**
 * Every HTTP request gets a request id before any handler runs (Node's `http.server.request.start`
 * diagnostics channel, like the peer capture of the sign-in limits): the client's or proxy's
 * `X-Request-Id` when it is sane, else a new UUID. It is written into the request headers (so route
 * handlers see the one id), sent back as `X-Request-Id`, put in the log context of everything the
 * request does, and ends the request with one access-log line (method, path, status, duration;
 * Next's static files are not logged). Idempotent.
 */
export function installRequestIds(): void {
  if (g[INSTALLED]) return
  diagnostics.subscribe('http.server.request.start', (message) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse }
    const reqId = requestIdFrom(request.headers[REQUEST_ID_HEADER])
    request.headers[REQUEST_ID_HEADER] = reqId
    if (!response.headersSent) response.setHeader('X-Request-Id', reqId)
    enterRequest(reqId)
    const path = (request.url ?? '').split('?')[0] ?? ''
    if (path.startsWith('/_next/')) return
    const started = performance.now()
    response.once('finish', () => {
      log().info(
        {
          reqId,
          method: request.method,
          path,
          status: response.statusCode,
          ms: Math.round(performance.now() - started),
        },
        'request',
      )
    })
  })
  g[INSTALLED] = true
}
