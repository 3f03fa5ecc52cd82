/**
 * Parley's LLM client: the official openai SDK (with its own retries off) plus what research runs
 * need around it: our retries (exponential backoff with full jitter, Retry-After honoured),
 * per-connection concurrency and rate limits shared across the process, timeouts, cancellation,
 * streaming with time-to-first-token, structured output validated with zod (with bounded re-asks),
 * and a complete, JSON-serialisable record of every attempt for the call log.
 *
 * The API key never appears in an {@link AttemptRecord} or in an {@link LlmError} message.
 */
import { createHash } from 'node:crypto'
import OpenAI from 'openai'
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import { z } from 'zod'
import { BlockedAddressError } from './address-policy'
import {
  type ConnectionLimiter,
  getConnectionLimiter,
  type GlobalLimiter,
  type GlobalPermit,
  type Permit,
} from './limiter'
import { HAS_MASKED_KEY, redactor, secretList, streamRedactor } from './redact'
import { approxTokens, conversationText } from './text'
import { createNodeFetch, createProxiedFetch, type FetchLike, proxyConfigured } from './transport'
import { crossCopy } from '../cross-copy'

/** How to reach one provider account, and the limits to respect there. */
export type LlmConnection = {
  /**
   * Key of the shared limiter: all clients with the same id share one concurrency and rate budget
   * in this process. Default: the base URL plus a hash of the API key.
   */
  id?: string
  baseURL: string
  apiKey: string
  /**
   * Per-attempt timeout. For plain calls it bounds the whole attempt; for streams it bounds the wait
   * for the first chunk and every gap between chunks (so long generations that keep streaming live).
   */
  timeoutMs: number
  maxConcurrency: number
  requestsPerMinute?: number
  tokensPerMinute?: number
  /** Seconds of rate budget that may be spent in one burst (default 1; see LimiterConfig). */
  burstSeconds?: number
  /** Retries after the first attempt on 429, 5xx, timeouts, connection and response errors (default 3). */
  maxRetries?: number
  /** First backoff ceiling in ms; the ceiling doubles per retry and a uniform draw below it is used (default 500). */
  retryBaseMs?: number
  /** Cap of the backoff ceiling (default 30 000). */
  retryMaxDelayMs?: number
  /** A Retry-After longer than this ends the call with a rate_limited error instead of waiting (default 60 000). */
  maxRetryAfterMs?: number
  extraHeaders?: Record<string, string>
  /** More secrets to keep out of records, error messages and redacted output, like the key (secret header values). */
  secrets?: string[]
  /** False when `apiKey` is only a placeholder for a server that needs none (it is then not redacted). Default true. */
  apiKeyIsSecret?: boolean
  /**
   * HTTP transport under the SDK: 'node' (default) is a keep-alive node:http(s) transport shared by
   * the process (much cheaper per call than the built-in fetch), or, when HTTPS_PROXY / HTTP_PROXY
   * is set, undici's fetch through that proxy (NO_PROXY honoured); 'direct' is the node transport
   * whatever the environment says (Parley's own demo server on loopback); 'fetch' is the built-in
   * fetch; or pass any fetch function.
   */
  transport?: 'node' | 'direct' | 'fetch' | FetchLike
  /** Source of randomness for the jitter (tests). Default Math.random. */
  random?: () => number
  /**
   * Limits shared with every other process (the database's), asked after the local limiter admitted
   * a call; a 429 pauses it too, so every process backs off.
   */
  globalLimiter?: GlobalLimiter
}

/** Chat parameters as the openai SDK takes them; streaming is chosen by the method, not a flag. */
export type ChatParams = Omit<ChatCompletionCreateParamsNonStreaming, 'stream' | 'stream_options'>

/** What the body of an attempt's request was (the params plus the streaming flags we add). */
export type SentRequest = ChatParams & { stream?: boolean; stream_options?: { include_usage?: boolean } }

export type LlmUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number }

/** Why a call failed. Retryable: timeout, rate_limited, server, connection, bad_response, truncated. */
export type LlmErrorKind =
  | 'aborted'
  | 'timeout'
  | 'rate_limited'
  | 'server'
  | 'connection'
  | 'bad_response'
  | 'truncated'
  | 'auth'
  | 'client'
  | 'invalid_output'
  | 'blocked'
  | 'unknown'

/** One HTTP attempt, as the call log persists it. Plain JSON: strings, numbers, objects. */
export type AttemptRecord = {
  /** 1-based, counted over the whole call (re-asks included). */
  attempt: number
  /** For structured output: 0 for the first question, n for the n-th re-ask. */
  ask?: number
  /** ISO time the request was sent (after any queueing). */
  startedAt: string
  /** Time spent waiting for a concurrency slot and rate budget before sending. */
  queuedMs: number
  /** From sending to the end of the response (or the failure). */
  latencyMs: number
  /** Streaming only: from sending to the first content token. */
  ttftMs?: number
  status: 'ok' | 'error'
  errorKind?: LlmErrorKind
  error?: string
  httpStatus?: number
  /** The provider's x-request-id. */
  requestId?: string
  /** Retry-After the server asked for, in ms. */
  retryAfterMs?: number
  /** Delay before the next attempt (when one follows). */
  backoffMs?: number
  /** The request body sent. */
  request: SentRequest
  /** The response; for streams the assembled completion. */
  response?: ChatCompletion
  /** Text received before a stream failed. */
  partialText?: string
  usage?: LlmUsage
  /** For structured output: why the reply was rejected. */
  validationError?: string
}

/** The outcome of a successful call. */
export type ChatResult = {
  text: string
  /** Tokens reported over all attempts of the call. */
  usage: LlmUsage
  /** The model that answered, as the provider reports it (the resolved version). */
  model: string
  finishReason: string | null
  requestId?: string
  /** Wall time of the whole call, queueing and retries included. */
  latencyMs: number
  /** Streaming only: time to first token of the successful attempt. */
  ttftMs?: number
  attempts: AttemptRecord[]
}

/** A reply checked by a parser: its value, or why it cannot be used. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string }

/** The outcome of {@link LlmClient.structured}: the validated value and the call. */
export type StructuredResult<T> = ChatResult & { value: T }

export type CallOptions = {
  /** Aborting rejects the call promptly with an `aborted` LlmError and closes the HTTP request. */
  signal?: AbortSignal
  /** Called after every attempt with its final record (awaited if it returns a promise). */
  onAttempt?: (attempt: AttemptRecord) => void | Promise<void>
  /**
   * Redact the secrets from the returned text and the streamed deltas too, as the records are
   * (for output shown to people, e.g. the playground). Default false: protocols get the model's text.
   */
  redactOutput?: boolean
}

export type StreamOptions = CallOptions & {
  /**
   * Called for every content delta. `attempt` changes when a failed stream is retried: the text so
   * far restarts then, so a UI should clear what it showed.
   */
  onToken?: (delta: string, info: { attempt: number; text: string }) => void
}

export type StructuredOptions = CallOptions & {
  /** Re-asks after an unparsable or invalid reply (default 2). */
  maxReasks?: number
  /** Stream each ask (default false). */
  stream?: boolean
  onToken?: StreamOptions['onToken']
  /** The user message sent after an invalid reply. */
  reaskPrompt?: (error: string) => string
}

/** A failed call. `attempts` holds every attempt made, the failing one last. */
export class LlmError extends Error {
  readonly kind: LlmErrorKind
  readonly httpStatus?: number
  readonly retryAfterMs?: number
  readonly attempts: AttemptRecord[]

  constructor(
    kind: LlmErrorKind,
    message: string,
    attempts: AttemptRecord[],
    extra: { httpStatus?: number; retryAfterMs?: number } = {},
  ) {
    super(message)
    this.name = 'LlmError'
    this.kind = kind
    this.attempts = attempts
    if (extra.httpStatus !== undefined) this.httpStatus = extra.httpStatus
    if (extra.retryAfterMs !== undefined) this.retryAfterMs = extra.retryAfterMs
  }
}
crossCopy(LlmError, 'LlmError')

/** A client bound to one connection. */
export type LlmClient = {
  /** The limiter key. */
  readonly connectionId: string
  /** The shared limiter of the connection. */
  readonly limiter: ConnectionLimiter
  /** One chat completion (not streamed). */
  chat(params: ChatParams, opts?: CallOptions): Promise<ChatResult>
  /** One streamed chat completion; resolves after the stream ends. A truncated stream is retried. */
  stream(params: ChatParams, opts?: StreamOptions): Promise<ChatResult>
  /** Ask for JSON, parse and validate it with `schema`, re-asking with the error when it fails. */
  structured<S extends z.ZodType>(
    params: ChatParams,
    schema: S,
    opts?: StructuredOptions,
  ): Promise<StructuredResult<z.output<S>>>
  /**
   * Ask, check the reply with `parse`, and re-ask with its error when it fails (bounded by
   * `maxReasks`); a rejected reply's attempt record is marked `invalid_output`. `structured` is this
   * with a JSON parse and a zod schema.
   */
  validated<T>(
    params: ChatParams,
    parse: (text: string) => Parsed<T>,
    opts?: StructuredOptions,
  ): Promise<StructuredResult<T>>
  /** Model ids the endpoint lists (a connection test). */
  listModels(opts?: { signal?: AbortSignal }): Promise<string[]>
}

const RETRYABLE = new Set<LlmErrorKind>([
  'timeout',
  'rate_limited',
  'server',
  'connection',
  'bad_response',
  'truncated',
])

const DEFAULT_REASK = (error: string) =>
  `Your previous reply could not be used: ${error}\nReply again with only a JSON object that fixes this.`

/** A deep copy of a JSON-like value with every string value (not property names) passed through `fix`. */
function deepMap<T>(value: T, fix: (s: string) => string): T {
  if (typeof value === 'string') return fix(value) as T
  if (Array.isArray(value)) return value.map((v) => deepMap(v, fix)) as T
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = deepMap(v, fix)
    return out as T
  }
  return value
}

/**
 * A JSON deep copy of `value` (so later changes by the caller cannot alter it, and it is exactly
 * what a JSON column will store), redacted when the key or a masked key occurs in it. The JSON
 * round trip is the fast path; the string-by-string walk runs only when there is something to redact.
 */
function redactedCopy<T>(value: T, secrets: readonly string[], redact: (s: string) => string): T {
  const json = JSON.stringify(value)
  const copy = JSON.parse(json) as T
  const found = secrets.some((secret) => json.includes(JSON.stringify(secret).slice(1, -1)))
  if (found || HAS_MASKED_KEY.test(json)) return deepMap(copy, redact)
  return copy
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal?.reason)
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Retry-After in ms from `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms)
  const ra = headers.get('retry-after')
  if (ra === null || ra.trim() === '') return undefined
  const seconds = Number(ra)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(ra)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

type Classified = { kind: LlmErrorKind; message: string; httpStatus?: number; retryAfterMs?: number }

function classify(e: unknown, timedOut: boolean, userAborted: boolean, timeoutMs: number): Classified {
  if (userAborted) return { kind: 'aborted', message: 'The call was cancelled.' }
  if (timedOut || e instanceof OpenAI.APIConnectionTimeoutError) {
    return { kind: 'timeout', message: `No response within ${timeoutMs} ms.` }
  }
  if (e instanceof OpenAI.APIUserAbortError) return { kind: 'aborted', message: 'The request was aborted.' }
  // The transport refused the address (a restricted connection aimed at an internal address).
  const blocked = e instanceof BlockedAddressError ? e : (e as { cause?: unknown })?.cause
  if (blocked instanceof BlockedAddressError) return { kind: 'blocked', message: blocked.message }
  if (e instanceof OpenAI.APIConnectionError) {
    // A body cut off after the headers surfaces as a failed fetch whose cause is 'terminated'.
    if (e.cause instanceof Error && e.cause.message === 'terminated') {
      return { kind: 'truncated', message: 'The response was cut off: terminated' }
    }
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : ''
    return { kind: 'connection', message: `${e.message}${cause}` }
  }
  if (e instanceof OpenAI.APIError) {
    const status = e.status
    if (status === undefined) return { kind: 'server', message: `Error event in the stream: ${e.message}` }
    const base = { httpStatus: status, message: e.message }
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(e.headers)
      return { kind: 'rate_limited', ...base, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }
    }
    if (status === 408) return { kind: 'timeout', ...base }
    if (status >= 500) return { kind: 'server', ...base }
    if (status === 401 || status === 403) return { kind: 'auth', ...base }
    return { kind: 'client', ...base }
  }
  if (e instanceof TruncatedStreamError) return { kind: 'truncated', message: e.message }
  if (e instanceof SyntaxError) return { kind: 'bad_response', message: `The response is not valid JSON: ${e.message}` }
  if (e instanceof TypeError && /terminated|other side closed|socket/i.test(`${e.message} ${String(e.cause)}`)) {
    return { kind: 'truncated', message: `The response was cut off: ${e.message}` }
  }
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) {
    return { kind: 'aborted', message: 'The request was aborted.' }
  }
  return { kind: 'unknown', message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }
}

class TruncatedStreamError extends Error {}

function addUsage(total: LlmUsage, u: LlmUsage | undefined): void {
  if (!u) return
  total.prompt_tokens += u.prompt_tokens
  total.completion_tokens += u.completion_tokens
  total.total_tokens += u.total_tokens
}

function pickUsage(u: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null | undefined) {
  return u
    ? { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens }
    : undefined
}

/** Parse a model reply as JSON, tolerating a ```json fence or prose around a single object. */
export function parseJsonReply(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const attempts = [text.trim()]
  const fence = text.match(/```(?:json)?\s*([\s\S]*?)```/i)
  if (fence?.[1]) attempts.push(fence[1].trim())
  const first = text.indexOf('{')
  const last = text.lastIndexOf('}')
  if (first >= 0 && last > first) attempts.push(text.slice(first, last + 1))
  let error = 'empty reply'
  for (const a of attempts) {
    if (!a) continue
    try {
      return { ok: true, value: JSON.parse(a) }
    } catch (e) {
      error = (e as Error).message
    }
  }
  return { ok: false, error: `the reply is not valid JSON (${error}).` }
}

let sharedNodeFetch: FetchLike | undefined

/** Watches every HTTP attempt of every client in the process (the metrics); set once by the server. */
export interface LlmObserver {
  attemptStarted(connectionId: string): void
  attemptEnded(connectionId: string, outcome: { ms: number; ok: boolean; kind?: string; httpStatus?: number }): void
}
const observerKey = Symbol.for('parley.llmObserver')
const observed = globalThis as unknown as { [observerKey]?: LlmObserver }
export function setLlmObserver(o: LlmObserver | undefined): void {
  observed[observerKey] = o
}

let sharedProxiedFetch: FetchLike | undefined

/** The process-wide keep-alive node transport (one pool of sockets per origin). */
function nodeFetch(): FetchLike {
  if (!sharedNodeFetch) sharedNodeFetch = createNodeFetch()
  return sharedNodeFetch
}

/** The default transport: through the environment's proxy when HTTPS_PROXY / HTTP_PROXY is set, else direct. */
function defaultFetch(): FetchLike {
  if (!proxyConfigured()) return nodeFetch()
  sharedProxiedFetch ??= createProxiedFetch()
  return sharedProxiedFetch
}

type RunState = { attempts: AttemptRecord[]; usage: LlmUsage; started: number }

/**
 * Create a client for one connection. Clients are cheap; the limiter behind them is shared per
 * connection id, so creating one per request is fine.
 */
export function createLlmClient(conn: LlmConnection): LlmClient {
  const maxRetries = conn.maxRetries ?? 3
  const retryBaseMs = conn.retryBaseMs ?? 500
  const retryMaxDelayMs = conn.retryMaxDelayMs ?? 30_000
  const maxRetryAfterMs = conn.maxRetryAfterMs ?? 60_000
  const random = conn.random ?? Math.random
  const timeoutMs = conn.timeoutMs
  const secrets = secretList([conn.apiKeyIsSecret === false ? undefined : conn.apiKey, ...(conn.secrets ?? [])])
  const redact = redactor(secrets)
  const connectionId =
    conn.id ?? `${conn.baseURL}#${createHash('sha256').update(conn.apiKey).digest('hex').slice(0, 12)}`
  const limiter = getConnectionLimiter(connectionId, {
    maxConcurrency: conn.maxConcurrency,
    ...(conn.requestsPerMinute !== undefined ? { requestsPerMinute: conn.requestsPerMinute } : {}),
    ...(conn.tokensPerMinute !== undefined ? { tokensPerMinute: conn.tokensPerMinute } : {}),
    ...(conn.burstSeconds !== undefined ? { burstSeconds: conn.burstSeconds } : {}),
  })
  const sdk = new OpenAI({
    baseURL: conn.baseURL,
    apiKey: conn.apiKey,
    maxRetries: 0,
    timeout: timeoutMs,
    logLevel: 'off',
    fetch:
      typeof conn.transport === 'function'
        ? conn.transport
        : conn.transport === 'fetch'
          ? (input, init) => fetch(input, init)
          : conn.transport === 'direct'
            ? nodeFetch()
            : defaultFetch(),
    ...(conn.extraHeaders ? { defaultHeaders: conn.extraHeaders } : {}),
  })

  function backoff(failures: number): number {
    const ceiling = Math.min(retryMaxDelayMs, retryBaseMs * 2 ** (failures - 1))
    return Math.floor(random() * ceiling)
  }

  /** One HTTP attempt. Resolves with the finished record (ok or error) and, on success, the text. */
  async function attemptOnce(
    sent: SentRequest,
    streaming: boolean,
    number: number,
    queuedMs: number,
    signal: AbortSignal | undefined,
    onToken: StreamOptions['onToken'],
    redactOutput: boolean,
  ): Promise<{ record: AttemptRecord; text?: string; classified?: Classified }> {
    const ac = new AbortController()
    let timedOut = false
    const onTimeout = () => {
      timedOut = true
      ac.abort()
    }
    let timer = setTimeout(onTimeout, timeoutMs)
    const onUserAbort = () => ac.abort()
    signal?.addEventListener('abort', onUserAbort, { once: true })
    const startedAt = new Date().toISOString()
    const t0 = performance.now()
    const record: AttemptRecord = { attempt: number, startedAt, queuedMs, latencyMs: 0, status: 'ok', request: sent }
    let partial = ''
    let streamOpen = false
    // What onToken has been given: the text itself, or with redactOutput the redacted text, where the
    // end that may still become a secret is held back until the next delta (or the end) settles it.
    const hold = redactOutput && onToken ? streamRedactor(secrets) : undefined
    let shown = ''
    const show = (piece: string) => {
      if (!onToken || !piece) return
      shown += piece
      onToken(piece, { attempt: number, text: shown })
    }
    try {
      if (!streaming) {
        const { data, request_id } = await sdk.chat.completions
          .create(sent as ChatCompletionCreateParamsNonStreaming, {
            signal: ac.signal,
            timeout: timeoutMs,
            maxRetries: 0,
          })
          .withResponse()
        record.latencyMs = performance.now() - t0
        if (request_id) record.requestId = request_id
        record.httpStatus = 200
        record.response = data
        const usage = pickUsage(data.usage)
        if (usage) record.usage = usage
        const text = data.choices[0]?.message.content ?? ''
        return { record, text }
      }
      const { data: chunks, request_id } = await sdk.chat.completions
        .create({ ...sent, stream: true }, { signal: ac.signal, timeout: timeoutMs, maxRetries: 0 })
        .withResponse()
      if (request_id) record.requestId = request_id
      record.httpStatus = 200
      streamOpen = true
      let last: ChatCompletionChunk | undefined
      let finish: ChatCompletion.Choice['finish_reason'] | null = null
      let usage: LlmUsage | undefined
      for await (const chunk of chunks) {
        clearTimeout(timer)
        timer = setTimeout(onTimeout, timeoutMs)
        last = chunk
        if (chunk.usage) usage = pickUsage(chunk.usage)
        const choice = chunk.choices[0]
        if (!choice) continue
        const delta = choice.delta.content
        if (delta) {
          if (record.ttftMs === undefined) record.ttftMs = performance.now() - t0
          partial += delta
          show(hold ? hold.push(delta) : delta)
        }
        if (choice.finish_reason) finish = choice.finish_reason
      }
      record.latencyMs = performance.now() - t0
      // The SDK ends the iteration quietly when the request is aborted; a stream without a finish
      // reason was cut off (the connection closed early, or the server ended it without [DONE]).
      if (ac.signal.aborted) throw new DOMException('aborted', 'AbortError')
      if (finish === null) throw new TruncatedStreamError('The stream ended before the model finished.')
      if (hold) show(hold.flush())
      if (usage) record.usage = usage
      record.response = {
        id: last?.id ?? '',
        object: 'chat.completion',
        created: last?.created ?? 0,
        model: last?.model ?? sent.model,
        ...(last?.system_fingerprint ? { system_fingerprint: last.system_fingerprint } : {}),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: partial, refusal: null },
            finish_reason: finish,
            logprobs: null,
          },
        ],
        ...(usage ? { usage } : {}),
      }
      return { record, text: partial }
    } catch (e) {
      if (!record.latencyMs) record.latencyMs = performance.now() - t0
      let c = classify(e, timedOut, signal?.aborted === true, timeoutMs)
      // Once a stream is open, a transport failure (connection reset, socket closed) means it was cut off.
      if (streamOpen && (c.kind === 'unknown' || c.kind === 'connection')) {
        c = { kind: 'truncated', message: `The stream was cut off: ${c.message}` }
      }
      record.status = 'error'
      record.errorKind = c.kind
      record.error = c.message
      if (c.httpStatus !== undefined) record.httpStatus = c.httpStatus
      else if (c.kind !== 'truncated' && c.kind !== 'bad_response') delete record.httpStatus
      if (c.retryAfterMs !== undefined) record.retryAfterMs = c.retryAfterMs
      if (e instanceof OpenAI.APIError && e.requestID) record.requestId = e.requestID
      if (partial) record.partialText = partial
      return { record, classified: c }
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onUserAbort)
    }
  }

  async function emit(record: AttemptRecord, state: RunState, onAttempt: CallOptions['onAttempt']) {
    const clean = redactedCopy(record, secrets, redact)
    state.attempts.push(clean)
    const r = onAttempt?.(clean)
    if (r && typeof (r as Promise<void>).then === 'function') await r
  }

  function fail(state: RunState, c: Classified): never {
    throw new LlmError(c.kind, redact(c.message), state.attempts, {
      ...(c.httpStatus !== undefined ? { httpStatus: c.httpStatus } : {}),
      ...(c.retryAfterMs !== undefined ? { retryAfterMs: c.retryAfterMs } : {}),
    })
  }

  /**
   * One logical ask with transport retries. `validate` runs on a successful reply before its record
   * is emitted; a validation error marks that record invalid_output (no transport retry).
   */
  async function run(
    params: ChatParams,
    streaming: boolean,
    state: RunState,
    opts: StreamOptions,
    ask: number | undefined,
    validate?: (text: string) => string | undefined,
  ): Promise<ChatResult & { invalid?: string }> {
    const { signal, onAttempt, onToken } = opts
    const redactOutput = opts.redactOutput === true
    const sent: SentRequest = streaming ? { ...params, stream: true, stream_options: { include_usage: true } } : params
    const estimate =
      approxTokens(conversationText(params.messages)) + (params.max_completion_tokens ?? params.max_tokens ?? 0)
    for (let failures = 0; ; ) {
      let permit: Permit
      try {
        permit = await limiter.acquire(estimate, signal)
      } catch (e) {
        if (signal?.aborted) fail(state, { kind: 'aborted', message: 'The call was cancelled.' })
        throw e
      }
      let global: GlobalPermit | undefined
      if (conn.globalLimiter) {
        try {
          global = await conn.globalLimiter.acquire(estimate, signal)
        } catch (e) {
          permit.release()
          if (signal?.aborted) fail(state, { kind: 'aborted', message: 'The call was cancelled.' })
          throw e
        }
      }
      const number = state.attempts.length + 1
      const observer = observed[observerKey]
      observer?.attemptStarted(connectionId)
      const queuedMs = permit.waitedMs + (global?.waitedMs ?? 0)
      const out = await attemptOnce(sent, streaming, number, queuedMs, signal, onToken, redactOutput).finally(() =>
        permit.release(),
      )
      const { record } = out
      await global?.release(record.usage ? record.usage.total_tokens - estimate : 0)
      observer?.attemptEnded(connectionId, {
        ms: record.latencyMs,
        ok: record.status === 'ok',
        ...(record.errorKind ? { kind: record.errorKind } : {}),
        ...(record.httpStatus !== undefined ? { httpStatus: record.httpStatus } : {}),
      })
      if (ask !== undefined) record.ask = ask
      if (record.usage) {
        permit.adjustTokens(record.usage.total_tokens - estimate)
        addUsage(state.usage, record.usage)
      }
      if (out.text !== undefined) {
        const invalid = validate?.(out.text)
        if (invalid !== undefined) {
          record.status = 'error'
          record.errorKind = 'invalid_output'
          record.error = invalid
          record.validationError = invalid
        }
        await emit(record, state, onAttempt)
        const response = record.response
        return {
          text: redactOutput ? redact(out.text) : out.text,
          usage: { ...state.usage },
          model: response?.model ?? params.model,
          finishReason: response?.choices[0]?.finish_reason ?? null,
          ...(record.requestId ? { requestId: record.requestId } : {}),
          latencyMs: performance.now() - state.started,
          ...(record.ttftMs !== undefined ? { ttftMs: record.ttftMs } : {}),
          attempts: state.attempts,
          ...(invalid !== undefined ? { invalid } : {}),
        }
      }
      const c = out.classified!
      failures++
      let delay: number | undefined
      if (RETRYABLE.has(c.kind) && failures <= maxRetries) {
        if (c.retryAfterMs !== undefined) {
          if (c.retryAfterMs <= maxRetryAfterMs) delay = c.retryAfterMs
        } else delay = backoff(failures)
      }
      if (c.kind === 'rate_limited' && c.retryAfterMs !== undefined)
        limiter.pause(Math.min(c.retryAfterMs, maxRetryAfterMs))
      // Every process backs off, not only this one (without Retry-After: as long as this caller waits).
      if (c.kind === 'rate_limited')
        await conn.globalLimiter?.pause(Math.min(c.retryAfterMs ?? backoff(failures), maxRetryAfterMs))
      if (delay !== undefined) record.backoffMs = delay
      await emit(record, state, onAttempt)
      if (delay === undefined) {
        if (c.kind === 'rate_limited' && c.retryAfterMs !== undefined && c.retryAfterMs > maxRetryAfterMs) {
          fail(state, {
            ...c,
            message: `${c.message} (Retry-After ${c.retryAfterMs} ms exceeds the ${maxRetryAfterMs} ms limit)`,
          })
        }
        fail(
          state,
          failures > maxRetries && RETRYABLE.has(c.kind)
            ? { ...c, message: `${c.message} (after ${failures} attempts)` }
            : c,
        )
      }
      try {
        await sleep(delay, signal)
      } catch {
        fail(state, { kind: 'aborted', message: 'The call was cancelled.' })
      }
    }
  }

  const newState = (): RunState => ({
    attempts: [],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    started: performance.now(),
  })

  return {
    connectionId,
    limiter,
    async chat(params, opts = {}) {
      return run(params, false, newState(), opts, undefined)
    },
    async stream(params, opts = {}) {
      return run(params, true, newState(), opts, undefined)
    },
    async structured<S extends z.ZodType>(params: ChatParams, schema: S, opts: StructuredOptions = {}) {
      const parse = (text: string): Parsed<z.output<S>> => {
        const json = parseJsonReply(text)
        if (!json.ok) return json
        const checked = schema.safeParse(json.value)
        if (!checked.success)
          return { ok: false, error: `the JSON does not match the required shape:\n${z.prettifyError(checked.error)}` }
        return { ok: true, value: checked.data }
      }
      return this.validated(
        { ...params, response_format: params.response_format ?? { type: 'json_object' } },
        parse,
        opts,
      )
    },
    async validated<T>(params: ChatParams, parse: (text: string) => Parsed<T>, opts: StructuredOptions = {}) {
      const maxReasks = opts.maxReasks ?? 2
      const reaskPrompt = opts.reaskPrompt ?? DEFAULT_REASK
      const state = newState()
      const messages: ChatCompletionMessageParam[] = [...params.messages]
      let value: T | undefined
      const validate = (text: string): string | undefined => {
        const parsed = parse(text)
        if (!parsed.ok) return parsed.error
        value = parsed.value
        return undefined
      }
      for (let ask = 0; ; ask++) {
        const result = await run(
          { ...params, messages: [...messages] },
          opts.stream === true,
          state,
          opts,
          ask,
          validate,
        )
        if (result.invalid === undefined) {
          const { invalid: _, ...ok } = result
          return { ...ok, value: value as T }
        }
        if (ask >= maxReasks) {
          fail(state, {
            kind: 'invalid_output',
            message: `No valid reply after ${ask + 1} asks: ${result.invalid}`,
          })
        }
        messages.push(
          { role: 'assistant', content: result.text },
          { role: 'user', content: reaskPrompt(result.invalid) },
        )
      }
    },
    async listModels(opts = {}) {
      try {
        const page = await sdk.models.list({ signal: opts.signal, timeout: timeoutMs, maxRetries: 0 })
        return page.data.map((m) => m.id)
      } catch (e) {
        const c = classify(e, false, opts.signal?.aborted === true, timeoutMs)
        throw new LlmError(
          c.kind,
          redact(c.message),
          [],
          c.httpStatus !== undefined ? { httpStatus: c.httpStatus } : {},
        )
      }
    },
  }
}
