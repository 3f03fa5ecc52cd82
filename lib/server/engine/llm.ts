import { createHash } from 'node:crypto'
import type { z } from 'zod'
import { type ChatParams, LlmError, type Parsed, parseJsonReply } from '@/lib/llm/client'
import { db } from '@/lib/server/db'
import type { LlmRef } from '@/lib/server/engine/seats'
import { type AskCheck, cachedConnection, recordedAsk, recordedChat } from '@/lib/server/llm/runtime'
import { withoutNul } from '@/lib/server/pg-text'

/**
 * The one recorded LLM helper every protocol agent uses: chat, and checked output (a parser or
 * JSON + zod) with the bounded re-ask `lib/llm` implements. Every attempt is a call-log row tied to
 * the session and the message it served; a rejected reply's row is marked failed. Images travel as
 * `asset:<name>` references of the session's dataset: they are inlined just before the request is
 * sent and logged by reference (name and SHA-256), so neither the call log nor the context snapshot
 * repeats the bytes.
 */
export type ChatMessage = {
  role: 'system' | 'user' | 'assistant'
  content: string | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>
}

export interface ChatRequest {
  messages: ChatMessage[]
  temperature?: number
  seed?: number
  max_tokens?: number
  top_p?: number
  /** Stop sequences (e.g. ReAct's "\nObservation 2:"): the model stops before writing one. */
  stop?: string[]
  /** OpenAI's penalties, in [-2, 2] (Thomas et al.'s relevance labeller uses frequency 0.5, presence 0). */
  frequency_penalty?: number
  presence_penalty?: number
  response_format?: ChatParams['response_format']
}

export interface CallOpts {
  purpose: string
  /** Stream the reply to the session's watchers (its seat is named in the delta events). */
  stream?: boolean
}

export interface LlmTools {
  chat(ref: LlmRef, req: ChatRequest, opts: CallOpts): Promise<{ text: string; callId: string | null }>
  ask<T>(
    ref: LlmRef,
    req: ChatRequest,
    check: AskCheck<T>,
    opts: CallOpts,
  ): Promise<{ value: T; text: string; callId: string | null }>
  /** JSON answers of a shape; `check` adds the protocol's own rules (k, a label space …). */
  json<S extends z.ZodType>(
    ref: LlmRef,
    req: ChatRequest,
    schema: S,
    opts: CallOpts & { check?: (v: z.output<S>) => string | null },
  ): Promise<{ value: z.output<S>; text: string; callId: string | null }>
}

export interface LlmToolsOptions {
  studyId: string
  sessionId: string
  seq: number
  /** The dataset whose assets `asset:` URLs name. */
  datasetId?: string
  /** Time spent waiting for models, accumulated (the runner's own time is the rest). */
  clock: { llmMs: number }
  /** Streams text to the session's watchers. */
  stream?: (seat: string | undefined) => (delta: string, info: { text: string }) => void
  seat?: string
  /** The step's signal: aborting it aborts the call in flight (the HTTP request) and its retries. */
  signal?: AbortSignal
}

const ASSET = 'asset:'

/** Assets as data: URLs, cached per process (a few MB at most; X-rays are small). */
const assetCache = new Map<string, Promise<{ url: string; sha256: string } | undefined>>()
const ASSET_CACHE_MAX = 256
export function assetDataUrl(datasetId: string, name: string): Promise<{ url: string; sha256: string } | undefined> {
  const key = `${datasetId}/${name}`
  let hit = assetCache.get(key)
  if (!hit) {
    hit = db.asset.findUnique({ where: { datasetId_name: { datasetId, name } } }).then((a) =>
      a
        ? {
            url: `data:${a.mime};base64,${Buffer.from(a.bytes).toString('base64')}`,
            sha256: createHash('sha256').update(a.bytes).digest('hex'),
          }
        : undefined,
    )
    hit.catch(() => assetCache.delete(key))
    if (assetCache.size >= ASSET_CACHE_MAX) assetCache.delete(assetCache.keys().next().value as string)
    assetCache.set(key, hit)
  }
  return hit
}

/** The request with every `asset:` image inlined, and how to write it back by reference. */
async function inline(
  messages: ChatMessage[],
  datasetId: string | undefined,
): Promise<{ messages: ChatMessage[]; refs: Map<string, string> }> {
  const refs = new Map<string, string>()
  const out: ChatMessage[] = []
  for (const m of messages) {
    if (typeof m.content === 'string') {
      out.push(m)
      continue
    }
    const parts = []
    for (const p of m.content) {
      if (p.type === 'image_url' && p.image_url.url.startsWith(ASSET)) {
        const name = p.image_url.url.slice(ASSET.length)
        const asset = datasetId ? await assetDataUrl(datasetId, name) : undefined
        if (!asset) throw new LlmError('client', `The image ${name} is not in the dataset.`, [])
        refs.set(asset.url, `${ASSET}${name}#sha256=${asset.sha256}`)
        parts.push({ type: 'image_url' as const, image_url: { url: asset.url } })
      } else parts.push(p)
    }
    out.push({ ...m, content: parts })
  }
  return { messages: out, refs }
}

/** A deep copy with inlined images put back as references. */
function byReference(value: unknown, refs: Map<string, string>): unknown {
  if (!refs.size) return value
  if (typeof value === 'string') return refs.get(value) ?? value
  if (Array.isArray(value)) return value.map((v) => byReference(v, refs))
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, byReference(v, refs)]))
  return value
}

export function llmTools(o: LlmToolsOptions): LlmTools {
  const call = async <T>(ref: LlmRef, req: ChatRequest, opts: CallOpts, check: AskCheck<T> | undefined) => {
    const conn = await cachedConnection(ref.connectionId)
    const { messages, refs } = await inline(req.messages, o.datasetId)
    const params: ChatParams = {
      model: ref.model ?? conn.defaultModel,
      ...(req.temperature !== undefined
        ? { temperature: req.temperature }
        : ref.temperature !== undefined
          ? { temperature: ref.temperature }
          : {}),
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
      ...(req.top_p !== undefined ? { top_p: req.top_p } : {}),
      ...(req.stop?.length ? { stop: req.stop } : {}),
      ...(req.frequency_penalty !== undefined ? { frequency_penalty: req.frequency_penalty } : {}),
      ...(req.presence_penalty !== undefined ? { presence_penalty: req.presence_penalty } : {}),
      ...(req.response_format ? { response_format: req.response_format } : {}),
      messages: messages as ChatParams['messages'],
    }
    const ctx = {
      purpose: opts.purpose,
      studyId: o.studyId,
      sessionRef: o.sessionId,
      messageRef: String(o.seq),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(refs.size ? { recordRequest: (r: unknown) => byReference(r, refs) } : {}),
      ...(opts.stream && o.stream ? { onToken: o.stream(o.seat) } : {}),
    }
    const t0 = performance.now()
    try {
      return check ? await recordedAsk(conn, params, ctx, check) : await recordedChat(conn, params, ctx)
    } finally {
      o.clock.llmMs += performance.now() - t0
    }
  }
  const tools: LlmTools = {
    async chat(ref, req, opts) {
      const r = await call(ref, req, opts, undefined)
      // The answer goes on without U+0000 (PostgreSQL refuses it); the call log keeps it, escaped.
      return { text: withoutNul(r.text), callId: r.callIds.at(-1) ?? null }
    },
    async ask(ref, req, check, opts) {
      const clean = { ...check, parse: (text: string) => check.parse(withoutNul(text)) }
      const r = (await call(ref, req, opts, clean)) as Awaited<ReturnType<typeof recordedAsk>>
      return { value: r.value as never, text: r.text, callId: r.callIds.at(-1) ?? null }
    },
    async json(ref, req, schema, opts) {
      const parse = (text: string): Parsed<z.output<typeof schema>> => {
        const json = parseJsonReply(text)
        if (!json.ok) return json
        const parsed = schema.safeParse(json.value)
        if (!parsed.success)
          return { ok: false, error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') }
        const problem = opts.check?.(parsed.data) ?? null
        return problem ? { ok: false, error: problem } : { ok: true, value: parsed.data }
      }
      return tools.ask(
        ref,
        { ...req, response_format: req.response_format ?? { type: 'json_object' } },
        {
          parse,
          reaskPrompt: (error) =>
            `Your answer cannot be used: ${error}. Answer again with JSON only, in the required shape.`,
        },
        opts,
      )
    },
  }
  return tools
}
