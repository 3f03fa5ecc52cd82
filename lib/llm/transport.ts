/**
 * A `fetch` for the openai SDK over node:http / node:https with a keep-alive agent.
 *
 * Why: Node's built-in fetch (undici's WHATWG implementation) costs about a millisecond of CPU per
 * call on a small machine; a plain keep-alive `http.request` costs a fraction of that. With dozens
 * of calls in flight that CPU turns into queueing delay for every call. This transport implements
 * exactly what the SDK needs: string or byte bodies, abort signals, a buffered body for JSON
 * responses and a streamed body for server-sent events. Anything else (e.g. multipart uploads)
 * falls back to the global fetch.
 *
 * No redirects are followed and no compression is requested (API responses are small, and the
 * server then sends identity encoding).
 */
import http from 'node:http'
import https from 'node:https'
import { Readable } from 'node:stream'
import { type AddressGuard, BlockedAddressError, guardedLookup, urlHost } from './address-policy'

/** The fetch signature the openai SDK accepts. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

function abortError(signal: AbortSignal): unknown {
  const r = signal.reason
  if (r instanceof Error && r.name === 'AbortError') return r
  return new DOMException('This operation was aborted', 'AbortError')
}

/** Headers of any HeadersInit shape as a plain lower-case record. */
function headerRecord(h: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (!h) return out
  if (h instanceof Headers) {
    h.forEach((v, k) => {
      out[k] = v
    })
  } else if (Array.isArray(h)) {
    for (const [k, v] of h) if (k !== undefined && v !== undefined) out[k.toLowerCase()] = v
  } else {
    for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v
  }
  return out
}

/**
 * A Response over bytes already received. A standard Response wraps its body in a web stream and
 * reads it back through that stream; this one answers text() / json() / arrayBuffer() from the
 * bytes directly and builds the stream only if someone asks for `body`.
 */
class BufferedResponse extends Response {
  #bytes: Buffer
  #stream: ReadableStream<Uint8Array> | undefined

  constructor(bytes: Buffer, init: ResponseInit) {
    super(null, init)
    this.#bytes = bytes
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (!this.#stream) {
      const bytes = this.#bytes
      this.#stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(bytes))
          controller.close()
        },
      })
    }
    return this.#stream as ReadableStream<Uint8Array<ArrayBuffer>>
  }

  override async text(): Promise<string> {
    return this.#bytes.toString('utf8')
  }

  override async json(): Promise<unknown> {
    return JSON.parse(this.#bytes.toString('utf8'))
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.#bytes
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer
  }
}

/**
 * Create a fetch over keep-alive agents. `maxSockets` per origin is unlimited by default: the
 * connection limiter already bounds concurrency, and a lower cap here would queue calls invisibly.
 * Call `close()` to drop idle sockets.
 *
 * With `guard`, every address connected to is checked first (IP literals before the request, names
 * in the agents' DNS lookup, so a name that re-resolves elsewhere is caught), and a refused one
 * fails the request with a {@link BlockedAddressError}; nothing falls back to the global fetch.
 */
export function createNodeFetch(opts: { maxSockets?: number; guard?: AddressGuard } = {}): FetchLike & {
  close(): void
} {
  const guard = opts.guard
  const agentOpts = {
    keepAlive: true,
    maxSockets: opts.maxSockets ?? Number.POSITIVE_INFINITY,
    scheduling: 'lifo' as const,
    ...(guard ? { lookup: guardedLookup(guard) } : {}),
  }
  const httpAgent = new http.Agent(agentOpts)
  const httpsAgent = new https.Agent(agentOpts)

  const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))) {
      if (guard) return Promise.reject(new BlockedAddressError('This request shape is not supported here.'))
      return fetch(input, init)
    }
    const url = typeof input === 'string' ? new URL(input) : input
    const secure = url.protocol === 'https:'
    if (!secure && url.protocol !== 'http:') {
      if (guard) return Promise.reject(new BlockedAddressError(`${url.protocol} URLs are not allowed.`))
      return fetch(input, init)
    }
    if (guard) {
      const { host, literal } = urlHost(url)
      const why = literal ? guard(host, host) : undefined
      if (why) return Promise.reject(new BlockedAddressError(why))
    }
    const signal = init.signal ?? undefined
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal))
      const headers = headerRecord(init.headers)
      delete headers['accept-encoding']
      if (body != null) headers['content-length'] = String(Buffer.byteLength(body))
      const req = (secure ? https : http).request(url, {
        method: init.method ?? 'GET',
        headers,
        agent: secure ? httpsAgent : httpAgent,
      })
      let settled = false
      let res: http.IncomingMessage | undefined
      const onAbort = () => {
        const err = abortError(signal!)
        req.destroy(err as Error)
        res?.destroy(err as Error)
        if (!settled) {
          settled = true
          reject(err)
        }
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const cleanup = () => signal?.removeEventListener('abort', onAbort)
      req.on('error', (e) => {
        cleanup()
        if (!settled) {
          settled = true
          reject(e instanceof BlockedAddressError ? e : new TypeError('fetch failed', { cause: e }))
        }
      })
      req.on('response', (incoming) => {
        res = incoming
        const status = incoming.statusCode ?? 0
        const resHeaders = new Headers()
        const raw = incoming.rawHeaders
        for (let i = 0; i + 1 < raw.length; i += 2) resHeaders.append(raw[i]!, raw[i + 1]!)
        const nullBody = status === 204 || status === 304 || init.method === 'HEAD'
        const streaming = (incoming.headers['content-type'] ?? '').includes('text/event-stream')
        if (nullBody || streaming) {
          incoming.on('close', cleanup)
          settled = true
          const webBody = nullBody ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>)
          resolve(new Response(webBody, { status, statusText: incoming.statusMessage ?? '', headers: resHeaders }))
          return
        }
        // Buffer small JSON bodies: one Response over complete bytes is much cheaper than a stream.
        const parts: Buffer[] = []
        incoming.on('data', (b: Buffer) => parts.push(b))
        incoming.on('end', () => {
          cleanup()
          if (settled) return
          settled = true
          resolve(
            new BufferedResponse(parts.length === 1 ? parts[0]! : Buffer.concat(parts), {
              status,
              statusText: incoming.statusMessage ?? '',
              headers: resHeaders,
            }),
          )
        })
        incoming.on('error', (e) => {
          cleanup()
          if (settled) return
          settled = true
          reject(new TypeError('terminated', { cause: e }))
        })
        incoming.on('aborted', () => {
          if (settled) return
          settled = true
          cleanup()
          reject(new TypeError('terminated'))
        })
      })
      req.end(body ?? undefined)
    })
  }
  return Object.assign(nodeFetch, {
    close() {
      httpAgent.destroy()
      httpsAgent.destroy()
    },
  })
}

/** Whether the environment names an outbound proxy (HTTPS_PROXY / HTTP_PROXY, either case). */
export function proxyConfigured(env: Record<string, string | undefined> = process.env): boolean {
  return !!(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy)
}

/**
 * A fetch through the proxy the environment names: undici's `EnvHttpProxyAgent` as the dispatcher
 * of undici's fetch, which reads HTTPS_PROXY / HTTP_PROXY / NO_PROXY (either case) the way curl
 * does (https URLs through HTTPS_PROXY with CONNECT, http URLs through HTTP_PROXY, NO_PROXY hosts
 * directly). Used instead of the keep-alive node transport when a proxy is set, so a lab behind
 * an outbound proxy reaches its provider. With `before`, each URL is checked first (a restricted
 * connection's address policy, since the proxy, not Parley, then resolves the name).
 */
export function createProxiedFetch(
  opts: { before?: (url: URL) => Promise<string | undefined> } = {},
): FetchLike & { close(): void } {
  // Loaded lazily: only processes with a proxy need undici's own fetch.
  let agent: import('undici').EnvHttpProxyAgent | undefined
  let undici: typeof import('undici') | undefined
  const proxied = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    undici ??= await import('undici')
    agent ??= new undici.EnvHttpProxyAgent()
    if (opts.before) {
      const url = new URL(input instanceof Request ? input.url : String(input))
      const why = await opts.before(url)
      if (why) throw new BlockedAddressError(why)
    }
    return (await undici.fetch(
      input as never,
      { ...(init as object), dispatcher: agent } as never,
    )) as unknown as Response
  }
  return Object.assign(proxied, {
    close() {
      void agent?.close()
    },
  })
}
