/**
 * A scriptable fake OpenAI-compatible server for tests, benchmarks and the offline demo.
 *
 * Endpoints: `GET /v1/models`, `POST /v1/chat/completions` (JSON or SSE streaming with
 * `stream_options.include_usage`), and a small admin API under `/_fake/` (`GET requests`,
 * `POST script`, `POST reset`) for driving a server that runs in another process.
 *
 * A script is a list of rules; the first rule whose `match` fits a request answers it with its next
 * reply (replies are consumed in order, the last one repeats). Replies are canned text or JSON, or a
 * fault: 429 (with Retry-After), 500, hang (never answer), malformed JSON, a truncated response, a
 * 401 that echoes the presented credential (to test redaction), or any other status. Requests no
 * rule matches get a deterministic echo, or the demo model's answer in demo mode.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { z } from 'zod'
import { DEMO_MODEL_ID, type DemoResponder, demoReply } from './demo-model'
import { approxTokens, conversationText, lastUserText, type MessageLike } from './text'

/** Matches a string exactly (string) or by pattern (RegExp). `contains` matchers test substrings. */
export type TextMatcher = string | RegExp

type Timing = {
  /** Delay before the response headers (and, when streaming, the first chunk). Overrides the server default. */
  latencyMs?: number
  /** Delay between streamed chunks. Overrides the server default. */
  chunkDelayMs?: number
}

/** One scripted answer. */
export type FakeReply = Timing &
  (
    | { text: string; finishReason?: 'stop' | 'length' }
    | { json: unknown }
    | { fault: '429'; retryAfter?: number; retryAfterMs?: number }
    | { fault: '500' }
    | { fault: 'hang' }
    | { fault: 'malformed' }
    | { fault: 'truncate'; clean?: boolean }
    | { fault: '401' }
    | { fault: 'status'; status: number; message?: string }
  )

/** A script rule: which requests it answers and with what. */
export type FakeRule = {
  match?: { model?: TextMatcher; contains?: TextMatcher }
  replies: FakeReply[]
}

/** What the server saw of one request. */
export type RecordedRequest = {
  /** Also sent back as the `x-request-id` header. */
  id: string
  method: string
  path: string
  model?: string
  stream: boolean
  body?: unknown
  /** The Authorization header as received (tests check the key is sent, and never logged elsewhere). */
  authorization?: string
  /** Every request header as received, names in lower case (e.g. a connection's extra headers). */
  headers: Record<string, string>
  /** Index of the rule that answered, if any. */
  rule?: number
  /** What was answered: 'text', 'json', 'echo', 'demo', 'fault:429' … */
  reply?: string
  status?: number
  /** Wall-clock time the request arrived (ms since epoch). */
  receivedAt: number
  /** Server-side handling time, from arrival to the end of the response (or the connection close). */
  durationMs?: number
  /** True if the client closed the connection before the response was complete. */
  clientClosed: boolean
  done: boolean
}

/** Options of {@link startFakeLlmServer}. */
export type FakeServerOptions = {
  /** Default 0 (an ephemeral port). */
  port?: number
  /** Default 127.0.0.1. */
  host?: string
  /** Default latency of every reply, ms (default 0). */
  latencyMs?: number
  /** Default delay between streamed chunks, ms (default 0). */
  chunkDelayMs?: number
  script?: FakeRule[]
  /** What unmatched requests get: a deterministic echo (default) or the demo model's answer. */
  defaultReply?: 'echo' | 'demo'
  /** The demo model's protocol rules, tried before its generic ones. */
  demoResponders?: readonly DemoResponder[]
  /** Ids listed by /v1/models (default: fake-model and the demo model). */
  models?: string[]
  /** Keep request bodies in `requests` (default true). */
  recordBodies?: boolean
}

/** A running fake server. */
export type FakeLlmServer = {
  /** Base URL for the openai SDK, ending in /v1. */
  url: string
  port: number
  /** Every request seen since start (or the last {@link FakeLlmServer.reset}). */
  requests: RecordedRequest[]
  /** Requests currently being handled. */
  readonly inFlight: number
  /** Highest {@link FakeLlmServer.inFlight} seen since start or reset. */
  readonly maxInFlight: number
  /** Replace the script (rule sequences restart). */
  setScript(rules: FakeRule[]): void
  /** Clear the recorded requests and counters (keeps the script, restarts its sequences). */
  reset(): void
  /** Stop listening and drop open connections (hanging requests included). */
  close(): Promise<void>
}

type ChatBody = {
  model?: string
  messages?: MessageLike[]
  stream?: boolean
  stream_options?: { include_usage?: boolean }
  response_format?: unknown
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve()
    const t = setTimeout(resolve, ms)
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t)
        resolve()
      },
      { once: true },
    )
  })

function matches(m: TextMatcher, s: string, whole: boolean): boolean {
  if (typeof m === 'string') return whole ? s === m : s.includes(m)
  m.lastIndex = 0
  return m.test(s)
}

/** Split a reply into stream deltas: one word (with its trailing whitespace) per chunk. */
function chunksOf(text: string): string[] {
  const parts = text.match(/\s*\S+\s*/g)
  return parts ?? (text ? [text] : [])
}

/** Start a fake OpenAI-compatible server. Resolves once it listens. */
export async function startFakeLlmServer(opts: FakeServerOptions = {}): Promise<FakeLlmServer> {
  let rules: FakeRule[] = opts.script ?? []
  let cursors: number[] = rules.map(() => 0)
  let requests: RecordedRequest[] = []
  let seq = 0
  let inFlight = 0
  let maxInFlight = 0
  const models = opts.models ?? ['fake-model', DEMO_MODEL_ID]
  const recordBodies = opts.recordBodies ?? true

  function nextReply(body: ChatBody): { reply: FakeReply; rule: number } | undefined {
    const model = body.model ?? ''
    let text: string | undefined
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!
      if (rule.match?.model !== undefined && !matches(rule.match.model, model, true)) continue
      if (rule.match?.contains !== undefined) {
        text ??= conversationText(body.messages ?? [])
        if (!matches(rule.match.contains, text, false)) continue
      }
      if (rule.replies.length === 0) continue
      const at = cursors[i] ?? 0
      cursors[i] = Math.min(at + 1, rule.replies.length - 1)
      return { reply: rule.replies[at]!, rule: i }
    }
    return undefined
  }

  function completion(id: string, model: string, content: string, prompt: number, finish: string) {
    const completionTokens = approxTokens(content)
    return {
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      system_fingerprint: model === DEMO_MODEL_ID ? 'simulated' : 'fake',
      choices: [
        { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish },
      ],
      usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens },
    }
  }

  function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    const data = JSON.stringify(body)
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(data),
      ...headers,
    })
    res.end(data)
  }

  function errorBody(message: string, type: string, code: string | null = null) {
    return { error: { message, type, param: null, code } }
  }

  async function handleChat(
    rec: RecordedRequest,
    body: ChatBody,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    closed: AbortSignal,
  ) {
    let model = body.model ?? 'fake-model'
    const messages = body.messages ?? []
    const stream = body.stream === true
    const picked = nextReply(body)
    let reply: FakeReply
    if (picked) {
      reply = picked.reply
      rec.rule = picked.rule
      rec.reply =
        'fault' in reply
          ? `fault:${reply.fault === 'status' ? reply.status : reply.fault}`
          : 'json' in reply
            ? 'json'
            : 'text'
    } else if (opts.defaultReply === 'demo' || model === DEMO_MODEL_ID) {
      // The simulated model says so in the response's model id, whatever was asked for.
      reply = { text: demoReply({ messages, response_format: body.response_format }, opts.demoResponders) }
      model = DEMO_MODEL_ID
      rec.reply = 'demo'
    } else {
      reply = { text: `Echo: ${lastUserText(messages)}` }
      rec.reply = 'echo'
    }
    const latency = reply.latencyMs ?? opts.latencyMs ?? 0
    const chunkDelay = reply.chunkDelayMs ?? opts.chunkDelayMs ?? 0
    const common = { 'x-request-id': rec.id }

    if ('fault' in reply && reply.fault === 'hang') return // until the client gives up
    await sleep(latency, closed)
    if (closed.aborted) return

    if ('fault' in reply) {
      switch (reply.fault) {
        case '429': {
          const headers: Record<string, string> = { ...common }
          if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter)
          if (reply.retryAfterMs !== undefined) headers['retry-after-ms'] = String(reply.retryAfterMs)
          return sendJson(res, 429, errorBody('Rate limit reached (fake).', 'requests', 'rate_limit_exceeded'), headers)
        }
        case '500':
          return sendJson(res, 500, errorBody('Internal server error (fake).', 'server_error'), common)
        case '401':
          return sendJson(
            res,
            401,
            errorBody(
              `Incorrect API key provided: ${(req.headers.authorization ?? '').replace(/^Bearer /, '')}.`,
              'invalid_request_error',
              'invalid_api_key',
            ),
            common,
          )
        case 'status':
          return sendJson(
            res,
            reply.status,
            errorBody(reply.message ?? `Fake error ${reply.status}.`, 'invalid_request_error'),
            common,
          )
        case 'malformed': {
          if (stream) {
            res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...common })
            res.write(
              `data: {"id":"chatcmpl-${rec.id}","object":"chat.completion.chunk","choices":[{"index":0,"del\n\n`,
            )
            res.end('data: [DONE]\n\n')
            return
          }
          const data = `{"id":"chatcmpl-${rec.id}","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"unterminated`
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': data.length, ...common })
          res.end(data)
          return
        }
        case 'truncate':
          break // below: starts a normal answer and cuts it
        default:
          return
      }
    }

    const content =
      'json' in reply
        ? JSON.stringify(reply.json)
        : 'text' in reply
          ? reply.text
          : 'The quick brown fox jumps over the lazy dog and keeps running until the line is cut.'
    const finish = 'finishReason' in reply && reply.finishReason ? reply.finishReason : 'stop'
    const truncate = 'fault' in reply && reply.fault === 'truncate' ? { clean: reply.clean === true } : undefined
    const prompt = approxTokens(conversationText(messages))

    if (!stream) {
      const data = JSON.stringify(completion(rec.id, model, content, prompt, finish))
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...common })
      if (truncate) {
        // Destroy only once the half has been flushed, or the client would see no response at all.
        res.write(data.slice(0, Math.floor(data.length / 2)), () => {
          if (truncate.clean) res.end()
          else res.socket?.destroy()
        })
        return
      }
      res.end(data)
      return
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...common })
    const created = Math.floor(Date.now() / 1000)
    const chunk = (delta: object, finishReason: string | null) =>
      `data: ${JSON.stringify({
        id: `chatcmpl-${rec.id}`,
        object: 'chat.completion.chunk',
        created,
        model,
        system_fingerprint: 'fake',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      })}\n\n`
    const pieces = chunksOf(content)
    const cut = truncate ? Math.max(1, Math.floor(pieces.length / 2)) : pieces.length
    res.write(chunk({ role: 'assistant', content: '' }, null))
    for (let i = 0; i < cut; i++) {
      if (i > 0) await sleep(chunkDelay, closed)
      if (closed.aborted) return
      res.write(chunk({ content: pieces[i] }, null))
    }
    if (truncate) {
      if (truncate.clean) res.end()
      else res.write('', () => res.socket?.destroy())
      return
    }
    res.write(chunk({}, finish))
    if (body.stream_options?.include_usage) {
      const completionTokens = approxTokens(content)
      res.write(
        `data: ${JSON.stringify({
          id: `chatcmpl-${rec.id}`,
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [],
          usage: {
            prompt_tokens: prompt,
            completion_tokens: completionTokens,
            total_tokens: prompt + completionTokens,
          },
        })}\n\n`,
      )
    }
    res.end('data: [DONE]\n\n')
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const started = performance.now()
    const path = (req.url ?? '/').split('?')[0]!
    const rec: RecordedRequest = {
      id: `req_${++seq}`,
      method: req.method ?? 'GET',
      path,
      stream: false,
      receivedAt: Date.now(),
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
      ),
      clientClosed: false,
      done: false,
    }
    if (req.headers.authorization) rec.authorization = req.headers.authorization
    const isAdmin = path.startsWith('/_fake/')
    if (!isAdmin) {
      requests.push(rec)
      inFlight++
      if (inFlight > maxInFlight) maxInFlight = inFlight
    }
    const closer = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) {
        rec.clientClosed = true
        closer.abort()
      }
      rec.done = true
      if (res.headersSent) rec.status = res.statusCode
      rec.durationMs = performance.now() - started
      if (!isAdmin) inFlight--
    })

    const raw = await readBody(req)
    if (raw === undefined) return // connection dropped while reading

    try {
      if (req.method === 'GET' && path === '/v1/models') {
        return sendJson(res, 200, {
          object: 'list',
          data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'parley-fake' })),
        })
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        let body: ChatBody
        try {
          body = JSON.parse(raw) as ChatBody
        } catch {
          return sendJson(res, 400, errorBody('Request body is not JSON.', 'invalid_request_error'))
        }
        rec.model = body.model
        rec.stream = body.stream === true
        if (recordBodies) rec.body = body
        if (!Array.isArray(body.messages)) {
          return sendJson(res, 400, errorBody('messages must be an array.', 'invalid_request_error'))
        }
        return await handleChat(rec, body, req, res, closer.signal)
      }
      if (req.method === 'GET' && path === '/_fake/requests') return sendJson(res, 200, requests)
      if (req.method === 'POST' && path === '/_fake/script') {
        try {
          api.setScript(rulesFromJson(JSON.parse(raw)))
        } catch (e) {
          return sendJson(res, 400, errorBody(`Invalid script: ${(e as Error).message}`, 'invalid_request_error'))
        }
        return sendJson(res, 200, { ok: true, rules: rules.length })
      }
      if (req.method === 'POST' && path === '/_fake/reset') {
        api.reset()
        return sendJson(res, 200, { ok: true })
      }
      sendJson(res, 404, errorBody(`No route ${req.method} ${path}.`, 'invalid_request_error'))
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, errorBody(`Fake server bug: ${(e as Error).message}`, 'server_error'))
      else res.destroy()
    }
  }

  const server = http.createServer((req, res) => {
    void handle(req, res)
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const host = opts.host ?? '127.0.0.1'

  const api: FakeLlmServer = {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    get requests() {
      return requests
    },
    set requests(v: RecordedRequest[]) {
      requests = v
    },
    get inFlight() {
      return inFlight
    },
    get maxInFlight() {
      return maxInFlight
    },
    setScript(next: FakeRule[]) {
      rules = next
      cursors = rules.map(() => 0)
    },
    reset() {
      requests = []
      maxInFlight = inFlight
      cursors = rules.map(() => 0)
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
  return api
}

function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    req.on('error', () => resolve(undefined))
    req.on('aborted', () => resolve(undefined))
  })
}

const jsonMatcher = z.union([z.string(), z.object({ regex: z.string(), flags: z.string().optional() })])
const timing = { latencyMs: z.number().nonnegative().optional(), chunkDelayMs: z.number().nonnegative().optional() }
const jsonReply = z.union([
  z.object({ text: z.string(), finishReason: z.enum(['stop', 'length']).optional(), ...timing }),
  z.object({ json: z.unknown(), ...timing }).refine((r) => 'json' in r, 'json is required'),
  z.object({
    fault: z.literal('429'),
    retryAfter: z.number().nonnegative().optional(),
    retryAfterMs: z.number().nonnegative().optional(),
    ...timing,
  }),
  z.object({ fault: z.enum(['500', 'hang', 'malformed', '401']), ...timing }),
  z.object({ fault: z.literal('truncate'), clean: z.boolean().optional(), ...timing }),
  z.object({
    fault: z.literal('status'),
    status: z.number().int().min(400).max(599),
    message: z.string().optional(),
    ...timing,
  }),
])
const jsonRules = z.array(
  z.object({
    match: z.object({ model: jsonMatcher.optional(), contains: jsonMatcher.optional() }).optional(),
    replies: z.array(jsonReply).min(1),
  }),
)

/**
 * Parse a script from JSON (a file, or the body of `POST /_fake/script`). JSON has no regular
 * expressions, so a matcher is a string or `{ "regex": "…", "flags": "i" }`.
 */
export function rulesFromJson(value: unknown): FakeRule[] {
  const parsed = jsonRules.parse(value)
  const toMatcher = (m: z.infer<typeof jsonMatcher> | undefined): TextMatcher | undefined =>
    m === undefined ? undefined : typeof m === 'string' ? m : new RegExp(m.regex, m.flags)
  return parsed.map((r) => {
    const model = toMatcher(r.match?.model)
    const contains = toMatcher(r.match?.contains)
    const match: FakeRule['match'] = {}
    if (model !== undefined) match.model = model
    if (contains !== undefined) match.contains = contains
    return { ...(r.match ? { match } : {}), replies: r.replies as FakeReply[] }
  })
}
