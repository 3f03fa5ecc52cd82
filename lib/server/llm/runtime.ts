import { createHash, randomUUID } from 'node:crypto'
import type { Prisma } from '@/lib/generated/prisma/client'
import {
  type AttemptRecord,
  type ChatParams,
  type ChatResult,
  createLlmClient,
  type LlmClient,
  LlmError,
  type Parsed,
} from '@/lib/llm/client'
import { DEMO_MODEL_ID, type DemoResponder } from '@/lib/llm/demo-model'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { unseal } from '@/lib/server/crypto'
import { type HeaderMap, headersOfRow, secretHeaderValues } from '@/lib/server/llm/header-secrets'
import { restrictedTransport } from '@/lib/server/llm/hosts'
import { globalLimiter } from '@/lib/server/llm/global-limits'
import { db, sql } from '@/lib/server/db'
import { pgJson, pgText } from '@/lib/server/pg-text'

/** The row fields the runtime needs (the sealed key included; never hand this to a page). */
export type ConnectionRow = {
  id: string
  studyId: string | null
  provider: string
  baseUrl: string
  apiKeyEnc: string | null
  defaultModel: string
  apiVersion: string | null
  extraHeaders: Prisma.JsonValue
  extraHeadersEnc: string | null
  timeoutMs: number
  maxConcurrency: number
  requestsPerMinute: number | null
  tokensPerMinute: number | null
  /** Its address was chosen by a non-admin: public addresses only (lib/server/llm/hosts.ts). */
  restrictedHosts: boolean
  updatedAt: Date
}

export const DEMO_CONNECTION_ID = 'builtin-demo'
export const DEMO_CONNECTION_NAME = 'Simulated demo model (offline)'

const g = globalThis as unknown as {
  parleyDemoServer?: Promise<FakeLlmServer>
  parleyDemoRules?: DemoResponder
  parleyLlmClients?: Map<string, LlmClient>
}

/**
 * Every protocol's demo rules (its plugin's `demo`), so the simulated model plays every seat. The
 * engine registers them when it loads its plugins (lib/server/engine/plugins.ts): this module sits
 * below the engine and does not import it. A request that arrives before (none of a protocol's can:
 * its agent ran through the engine) gets the generic demo replies.
 */
export function setDemoRules(rules: DemoResponder): void {
  // On globalThis like the server itself: Next may load this module once per bundle.
  g.parleyDemoRules = rules
}

/**
 * The offline demo model is served by our own OpenAI-compatible server, started on loopback inside
 * this process on first use, so the demo goes through exactly the same SDK path as a real model.
 */
export function demoEndpoint(): Promise<FakeLlmServer> {
  g.parleyDemoServer ??= startFakeLlmServer({
    defaultReply: 'demo',
    demoResponders: [(req) => g.parleyDemoRules?.(req)],
    models: [DEMO_MODEL_ID],
    recordBodies: false,
  })
  return g.parleyDemoServer
}

/** Stop this process's demo model server, if it started one (a CLI command ends; tests). */
export async function stopDemoEndpoint(): Promise<void> {
  const p = g.parleyDemoServer
  g.parleyDemoServer = undefined
  if (p) await (await p).close()
}

/** Create the built-in demo connection (global) if it does not exist. Idempotent. */
export async function ensureDemoConnection(): Promise<void> {
  await db.llmConnection.upsert({
    where: { id: DEMO_CONNECTION_ID },
    create: {
      id: DEMO_CONNECTION_ID,
      name: DEMO_CONNECTION_NAME,
      provider: 'demo',
      baseUrl: 'builtin:demo',
      defaultModel: DEMO_MODEL_ID,
      maxConcurrency: 16,
      timeoutMs: 30_000,
    },
    update: {},
  })
}

function headersOf(row: ConnectionRow, extra: HeaderMap, apiKey: string): HeaderMap {
  // Azure's v1 API takes the key in an `api-key` header (Bearer also works with Entra tokens).
  return row.provider === 'azure' && apiKey ? { ...extra, 'api-key': apiKey } : { ...extra }
}

/** A client for a connection row; one per (connection, version of its settings) per process. */
export async function clientFor(row: ConnectionRow): Promise<LlmClient> {
  g.parleyLlmClients ??= new Map()
  const cacheKey = `${row.id}:${row.updatedAt.getTime()}`
  const cached = g.parleyLlmClients.get(cacheKey)
  if (cached) return cached
  const apiKey = row.apiKeyEnc ? unseal(row.apiKeyEnc) : 'none'
  const extra = headersOfRow(row)
  let baseURL = row.baseUrl
  if (row.provider === 'demo') baseURL = (await demoEndpoint()).url
  const client = createLlmClient({
    id: row.id,
    baseURL,
    apiKey,
    // Without a stored key the SDK still sends a placeholder ("none"), which is no secret to redact.
    apiKeyIsSecret: !!row.apiKeyEnc,
    timeoutMs: row.timeoutMs,
    maxConcurrency: row.maxConcurrency,
    requestsPerMinute: row.requestsPerMinute ?? undefined,
    tokensPerMinute: row.tokensPerMinute ?? undefined,
    extraHeaders: headersOf(row, extra, apiKey),
    secrets: secretHeaderValues(extra),
    // The demo model is Parley's own server on loopback, never an address someone typed.
    ...(row.restrictedHosts && row.provider !== 'demo' ? { transport: restrictedTransport() } : {}),
    // Never through an outbound proxy: the demo model is this process's own loopback server.
    ...(row.provider === 'demo' ? { transport: 'direct' as const } : {}),
    // The limits hold across every process (PostgreSQL), except for the demo model, which each
    // process serves itself.
    ...(row.provider === 'demo'
      ? {}
      : {
          globalLimiter: globalLimiter(row.id, () => ({
            maxConcurrency: row.maxConcurrency,
            requestsPerMinute: row.requestsPerMinute,
            tokensPerMinute: row.tokensPerMinute,
            timeoutMs: row.timeoutMs,
          })),
        }),
  })
  for (const k of g.parleyLlmClients.keys()) if (k.startsWith(`${row.id}:`)) g.parleyLlmClients.delete(k)
  g.parleyLlmClients.set(cacheKey, client)
  return client
}

/** The replay-cache key: the request that decides the answer (messages and sampling parameters). */
export function promptHash(params: ChatParams): string {
  const {
    model,
    messages,
    temperature,
    top_p,
    max_tokens,
    max_completion_tokens,
    seed,
    response_format,
    stop,
    frequency_penalty,
    presence_penalty,
  } = params as ChatParams & Record<string, unknown>
  // The penalties come last and are left out when not given (JSON.stringify drops undefined), so
  // the keys of calls made before they existed are unchanged.
  const canonical = JSON.stringify({
    model,
    messages,
    temperature,
    top_p,
    max_tokens,
    max_completion_tokens,
    seed,
    response_format,
    stop,
    frequency_penalty,
    presence_penalty,
  })
  return createHash('sha256').update(canonical).digest('hex')
}

type Price = { model: string; inputPerMTok: number; outputPerMTok: number }

/** Exact model match first, then the longest matching prefix pattern ("gpt-4o*"). */
export function priceFor(model: string, prices: Price[]): Price | undefined {
  const exact = prices.find((p) => p.model === model)
  if (exact) return exact
  return prices
    .filter((p) => p.model.endsWith('*') && model.startsWith(p.model.slice(0, -1)))
    .sort((a, b) => b.model.length - a.model.length)[0]
}

export function costOf(tokensIn: number, tokensOut: number, price: Price | undefined): number | null {
  if (!price) return null
  return (tokensIn * price.inputPerMTok + tokensOut * price.outputPerMTok) / 1_000_000
}

/**
 * The price table, cached for a few seconds per process (a call reads it for every attempt's cost).
 * Edits in this process clear it at once; other processes see them within PRICE_TTL_MS.
 */
const PRICE_TTL_MS = 5000
let priceCache: { at: number; prices: Promise<Price[]> } | undefined
export function currentPrices(): Promise<Price[]> {
  if (!priceCache || Date.now() - priceCache.at > PRICE_TTL_MS) {
    const prices = db.modelPrice.findMany()
    priceCache = { at: Date.now(), prices }
    prices.catch(() => {
      priceCache = undefined
    })
  }
  return priceCache.prices
}
export function forgetPrices() {
  priceCache = undefined
}

export interface CallContext {
  purpose: string
  userId?: string | null
  studyId?: string | null
  presetVersionId?: string | null
  sessionRef?: string | null
  messageRef?: string | null
  /** Serve an identical earlier successful request from the call log instead of calling the model. */
  replay?: boolean
  signal?: AbortSignal
  /** Keep the key (and secret header values) out of the returned text and deltas, as the call log does. */
  redactOutput?: boolean
  /** Stream the reply; called with each text delta. */
  onToken?: (delta: string, info: { attempt: number; text: string }) => void
  /**
   * How a request is written to the call log (default: as sent). Protocol steps replace inline images
   * by the asset they came from, so the log names the exact bytes without repeating them.
   */
  recordRequest?: (request: unknown) => unknown
}

/** A reply check for {@link recordedAsk}: the value, or the error the model is re-asked with. */
export interface AskCheck<T> {
  parse: (text: string) => Parsed<T>
  /** Re-asks after an unusable reply (default 2, so 3 asks in all). */
  maxReasks?: number
  reaskPrompt?: (error: string) => string
}

export interface RecordedResult extends ChatResult {
  callIds: string[]
  cached: boolean
  simulated: boolean
}

function json(value: unknown): Prisma.InputJsonValue {
  return JSON.parse(JSON.stringify(value ?? null)) as Prisma.InputJsonValue
}

/**
 * Call a model through a connection and write one LlmCall row per attempt (request, response or
 * error, tokens, latency, time to first token, cost). With `replay`, an identical earlier
 * successful request is served from the log and recorded as a cached row.
 */
export function recordedChat(row: ConnectionRow, params: ChatParams, ctx: CallContext): Promise<RecordedResult> {
  return recorded(row, params, ctx, undefined) as Promise<RecordedResult>
}

/**
 * {@link recordedChat} with a check of the reply: an unusable reply is re-asked with the error
 * (bounded), and its attempt row is marked failed (`invalid_output`), never "ok".
 */
export async function recordedAsk<T>(
  row: ConnectionRow,
  params: ChatParams,
  ctx: CallContext,
  check: AskCheck<T>,
): Promise<RecordedResult & { value: T }> {
  return (await recorded(row, params, ctx, check)) as RecordedResult & { value: T }
}

async function recorded<T>(
  row: ConnectionRow,
  params: ChatParams,
  ctx: CallContext,
  check: AskCheck<T> | undefined,
): Promise<RecordedResult & { value?: T }> {
  const hash = promptHash(params)
  const simulated = row.provider === 'demo'
  const base = {
    connectionId: row.id,
    presetVersionId: ctx.presetVersionId ?? null,
    studyId: ctx.studyId ?? null,
    userId: ctx.userId ?? null,
    purpose: ctx.purpose,
    sessionRef: ctx.sessionRef ?? null,
    messageRef: ctx.messageRef ?? null,
    provider: row.provider,
    modelRequested: params.model,
    params: json({ ...params, messages: undefined }),
    seed: typeof params.seed === 'number' ? params.seed : null,
    promptHash: hash,
  }
  if (ctx.replay) {
    const hit = await db.llmCall.findFirst({
      where: { promptHash: hash, status: 'ok', cached: false },
      orderBy: { createdAt: 'desc' },
    })
    const response = hit?.response as
      | { choices?: Array<{ message?: { content?: string }; finish_reason?: string }> }
      | undefined
    const text = response?.choices?.[0]?.message?.content ?? ''
    // A cached reply that fails the check is not served: the model is asked again.
    const checked = check ? check.parse(text) : undefined
    if (hit?.response && response && (!checked || checked.ok)) {
      ctx.onToken?.(text, { attempt: 1, text })
      const created = await db.llmCall.create({
        data: {
          ...base,
          request: hit.request as Prisma.InputJsonValue,
          response: hit.response as Prisma.InputJsonValue,
          modelReported: hit.modelReported,
          status: 'ok',
          attempt: 1,
          tokensIn: 0,
          tokensOut: 0,
          latencyMs: 0,
          costUsd: 0,
          cached: true,
        },
      })
      return {
        text,
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        model: hit.modelReported ?? params.model,
        finishReason: response.choices?.[0]?.finish_reason ?? null,
        latencyMs: 0,
        attempts: [],
        callIds: [created.id],
        cached: true,
        simulated,
        ...(checked?.ok ? { value: checked.value } : {}),
      }
    }
  }
  const prices = await currentPrices()
  const callIds: string[] = []
  const onAttempt = async (a: AttemptRecord) => {
    const tokensIn = a.usage?.prompt_tokens ?? 0
    const tokensOut = a.usage?.completion_tokens ?? 0
    // One raw INSERT: the request can be a long chat (a growing PXP context, images), and this runs
    // for every attempt of every call, so it skips the query builder. Model output may hold U+0000,
    // which PostgreSQL refuses: pgText/pgJson write it escaped, so every attempt gets its row.
    const id = randomUUID()
    const cost = costOf(tokensIn, tokensOut, priceFor(params.model, prices))
    await sql().query(
      `INSERT INTO "LlmCall" (id, "connectionId", "presetVersionId", "studyId", purpose, "userId", "sessionRef",
         "messageRef", provider, "modelRequested", "modelReported", params, seed, "promptHash", request, response,
         error, "errorKind", "httpStatus", status, attempt, "tokensIn", "tokensOut", "latencyMs", "ttftMs", "costUsd")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15::jsonb, $16::jsonb, $17, $18,
         $19, $20, $21, $22, $23, $24, $25, $26)`,
      [
        id,
        base.connectionId,
        base.presetVersionId,
        base.studyId,
        base.purpose,
        base.userId,
        base.sessionRef,
        base.messageRef,
        base.provider,
        pgText(base.modelRequested),
        pgText(a.response?.model),
        pgJson(base.params),
        base.seed,
        base.promptHash,
        pgJson((ctx.recordRequest ? ctx.recordRequest(a.request) : a.request) ?? null),
        a.response ? pgJson(a.response) : null,
        pgText(a.error),
        a.errorKind ?? null,
        a.httpStatus ?? null,
        a.status,
        a.attempt,
        tokensIn,
        tokensOut,
        Math.round(a.latencyMs),
        a.ttftMs === undefined ? null : Math.round(a.ttftMs),
        cost,
      ],
    )
    const created = { id }
    callIds.push(created.id)
  }
  const client = await clientFor(row)
  if (check) {
    const result = await client.validated(params, check.parse, {
      signal: ctx.signal,
      onAttempt,
      ...(ctx.onToken ? { stream: true, onToken: ctx.onToken } : {}),
      ...(check.maxReasks !== undefined ? { maxReasks: check.maxReasks } : {}),
      ...(check.reaskPrompt ? { reaskPrompt: check.reaskPrompt } : {}),
    })
    return { ...result, callIds, cached: false, simulated }
  }
  const result = ctx.onToken
    ? await client.stream(params, {
        signal: ctx.signal,
        onAttempt,
        onToken: ctx.onToken,
        redactOutput: ctx.redactOutput,
      })
    : await client.chat(params, { signal: ctx.signal, onAttempt, redactOutput: ctx.redactOutput })
  return { ...result, callIds, cached: false, simulated }
}

/** Connection rows, cached for two seconds per process (every LLM call of every protocol step needs one). */
const connections = new Map<string, { at: number; row: Promise<ConnectionRow | null> }>()
export async function cachedConnection(id: string): Promise<ConnectionRow> {
  let hit = connections.get(id)
  if (!hit || Date.now() - hit.at > 2000) {
    hit = { at: Date.now(), row: db.llmConnection.findUnique({ where: { id } }) }
    connections.set(id, hit)
  }
  const row = await hit.row.catch((err) => {
    connections.delete(id)
    throw err
  })
  if (!row) {
    connections.delete(id)
    throw new LlmError('client', `Connection ${id} no longer exists.`, [])
  }
  return row
}

export { LlmError }
