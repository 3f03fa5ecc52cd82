import { AsyncLocalStorage } from 'node:async_hooks'
import pino, { type Logger } from 'pino'
import pretty from 'pino-pretty'
import { settings } from '@/lib/server/config'

/**
 * The one logger (pino): JSON lines on stdout, one object per event with `time`, `level`, `msg`,
 * the process kind (`web`, `worker`, `cli`) and, inside an HTTP request, its `reqId` (the
 * `X-Request-Id` the client or proxy sent when it is sane, else a fresh one; sent back on the
 * response, see {@link installRequestIds}). `PARLEY_LOG_FORMAT=pretty` (the default under
 * `next dev`) prints readable coloured lines instead; `PARLEY_LOG_LEVEL` filters (default info).
 * Errors go in `err` and are serialised with their stack.
 */
const requestContext = new AsyncLocalStorage<{ reqId: string }>()

const g = globalThis as unknown as { parleyLog?: Logger }

function build(): Logger {
  let level = 'info'
  let format: 'json' | 'pretty' = 'json'
  try {
    const c = settings(['PARLEY_LOG_LEVEL', 'PARLEY_LOG_FORMAT'])
    level = c.logLevel
    format = c.logFormat
  } catch {
    // A bad configuration is reported by whoever validates it at start; log with the defaults meanwhile.
  }
  const options: pino.LoggerOptions = {
    level,
    base: { pid: process.pid, proc: process.env.PARLEY_PROCESS ?? 'web' },
    mixin() {
      const ctx = requestContext.getStore()
      return ctx ? { reqId: ctx.reqId } : {}
    },
    serializers: {
      err(err: Error) {
        const out = pino.stdSerializers.err(err) as unknown as Record<string, unknown>
        // node-postgres errors carry their client (with its whole connection state): not for the logs.
        delete out.client
        return out
      },
    },
  }
  // pino-pretty as a stream in this thread (a transport would start a worker thread, which Next's
  // bundling breaks); development only, so its cost does not matter.
  return format === 'pretty' ? pino(options, pretty({ colorize: true, sync: true })) : pino(options)
}

/** The process's logger. */
export function log(): Logger {
  g.parleyLog ??= build()
  return g.parleyLog
}

/** Run `fn` with a request id in the log context (tests, jobs that want one). */
export function withRequestId<T>(reqId: string, fn: () => T): T {
  return requestContext.run({ reqId }, fn)
}

const SANE_ID = /^[\w.:-]{1,128}$/

/** The request id for an incoming header value: kept when sane (a proxy's id), else a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header
  return v && SANE_ID.test(v) ? v : crypto.randomUUID()
}

/**
 * Enter the request's log context (called from the `http.server.request.start` diagnostics
 * channel, synchronously before the server's handler runs, so everything the request does
 * inherits it).
 */
export function enterRequest(reqId: string): void {
  requestContext.enterWith({ reqId })
}
