/**
 * The offline demo model: a deterministic, rule-based stand-in for an LLM so Parley can be tried
 * without any provider. It is clearly labelled as simulated: its model id is
 * {@link DEMO_MODEL_ID} and every free-text reply starts with {@link DEMO_LABEL}. The same request
 * always gets the same reply.
 *
 * It is served over HTTP by the fake OpenAI-compatible server (`startFakeLlmServer({ defaultReply:
 * 'demo' })`, or any request for the model {@link DEMO_MODEL_ID}), so the app talks to it through
 * the ordinary openai SDK code path.
 */
import { contentText, fnv1a, lastUserText, type MessageLike } from './text'

/** Model id under which the demo model answers. */
export const DEMO_MODEL_ID = 'parley-demo-simulated'

/** Prefix of every free-text reply of the demo model. */
export const DEMO_LABEL = '[Simulated demo model]'

/** A protocol's demo rules: its reply to a request it recognises, undefined otherwise. */
export type DemoResponder = (req: DemoRequest) => string | undefined

/** The parts of a chat completion request the demo model looks at. */
export type DemoRequest = {
  messages: readonly MessageLike[]
  response_format?: unknown
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/**
 * Answer a chat request deterministically. JSON-mode requests (`response_format` of type
 * `json_object` or `json_schema`) get a JSON document: built from the `json_schema`, or from a JSON
 * Schema or an example object found in the prompt, or `{ "answer": …, "simulated": true }`.
 * Other requests get a short labelled text chosen by simple rules (multiple choice, yes/no,
 * relevance grades, questions).
 */
export function demoReply(req: DemoRequest, responders: readonly DemoResponder[] = []): string {
  // A protocol's own rules first (registered by the app: the demo plays every protocol's seats).
  for (const r of responders) {
    const reply = r(req)
    if (reply !== undefined) return reply
  }
  const seed = fnv1a(JSON.stringify(req.messages.map((m) => [m.role, contentText(m.content)])))
  const format = req.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined
  if (format?.type === 'json_schema') {
    return JSON.stringify(fromSchema(format.json_schema?.schema ?? {}, seed, ''))
  }
  if (format?.type === 'json_object') {
    const shape = findShape(req.messages)
    if (shape !== undefined) {
      return JSON.stringify(isSchema(shape) ? fromSchema(shape, seed, '') : fromExample(shape, seed, ''))
    }
    return JSON.stringify({ answer: textReply(req.messages, seed), simulated: true })
  }
  return textReply(req.messages, seed)
}

function pick<T>(items: readonly T[], seed: number): T {
  return items[seed % items.length]!
}

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim()
  return one.length > n ? `${one.slice(0, n - 1)}…` : one
}

function textReply(messages: readonly MessageLike[], seed: number): string {
  const user = lastUserText(messages).trim()
  if (!user) return `${DEMO_LABEL} I did not receive a question.`
  const lower = user.toLowerCase()

  // Multiple choice: lines such as "A) …", "(b) …", "C. …".
  const options = [...user.matchAll(/^\s*\(?([A-Ha-h])[).:]\s+(.+)$/gm)]
  if (options.length >= 2) {
    const o = pick(options, seed)
    return `${DEMO_LABEL} I choose ${o[1]!.toUpperCase()}) ${clip(o[2]!, 80)}`
  }
  if (/\byes or no\b|\(yes\/no\)|\byes\/no\b/.test(lower)) {
    return `${DEMO_LABEL} ${pick(['Yes.', 'No.'], seed)}`
  }
  const scale = lower.match(/\b(\d)\s*(?:-|–|to)\s*(\d)\b/)
  if (/relevan/.test(lower) && scale) {
    const lo = Number(scale[1])
    const hi = Number(scale[2])
    if (hi > lo) return `${DEMO_LABEL} ${lo + (seed % (hi - lo + 1))}`
  }
  if (user.endsWith('?')) {
    return `${DEMO_LABEL} A rule-based placeholder answer to "${clip(user, 80)}". No real model was consulted.`
  }
  const words = user.split(/\s+/).filter(Boolean).length
  return `${DEMO_LABEL} Noted your message (${words} word${words === 1 ? '' : 's'}). This reply is rule-based, not from a real LLM.`
}

/** The last JSON object embedded in a system or user message (e.g. an example or a JSON Schema). */
function findShape(messages: readonly MessageLike[]): Json | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role !== 'system' && m.role !== 'user' && m.role !== 'developer') continue
    const found = lastJsonObject(contentText(m.content))
    if (found !== undefined) return found
  }
  return undefined
}

/** The last top-level `{…}` in `text` that parses as JSON (nested objects are not separate candidates). */
function lastJsonObject(text: string): Json | undefined {
  let found: Json | undefined
  let start = text.indexOf('{')
  while (start >= 0) {
    const end = balancedEnd(text, start)
    let next = start + 1
    if (end > 0) {
      try {
        found = JSON.parse(text.slice(start, end + 1)) as Json
        next = end + 1
      } catch {
        // Not JSON (e.g. prose in braces): try the next brace.
      }
    }
    start = text.indexOf('{', next)
  }
  return found
}

/** Index of the `}` that closes the `{` at `start`, skipping braces inside JSON strings; -1 if none. */
function balancedEnd(text: string, start: number): number {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i
  }
  return -1
}

function isSchema(v: Json): v is { [key: string]: Json } {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    ((v.type === 'object' && typeof v.properties === 'object') || typeof v.$schema === 'string')
  )
}

/** The last property name of a path such as `.items[0].label` (`value` at the root). */
function fieldName(path: string): string {
  return (
    path
      .replace(/\[\d+\]/g, '')
      .split('.')
      .pop() || 'value'
  )
}

function fromSchema(schema: unknown, seed: number, path: string): Json {
  if (typeof schema !== 'object' || schema === null) return 'simulated'
  const s = schema as Record<string, unknown>
  const h = fnv1a(`${seed}:${path}`)
  if ('const' in s) return s.const as Json
  if (Array.isArray(s.enum) && s.enum.length > 0) return pick(s.enum as Json[], h)
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const alts = s[key]
    if (Array.isArray(alts) && alts.length > 0) {
      const nonNull = alts.find((a) => !(a && typeof a === 'object' && (a as { type?: unknown }).type === 'null'))
      return fromSchema(nonNull ?? alts[0], seed, path)
    }
  }
  let type = s.type
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null'
  if (type === undefined && typeof s.properties === 'object') type = 'object'
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>
      const out: { [key: string]: Json } = {}
      for (const [k, sub] of Object.entries(props)) out[k] = fromSchema(sub, seed, `${path}.${k}`)
      return out
    }
    case 'array': {
      const n = Math.max(1, typeof s.minItems === 'number' ? s.minItems : 1)
      return Array.from({ length: n }, (_, i) => fromSchema(s.items, seed, `${path}[${i}]`))
    }
    case 'integer':
    case 'number': {
      const lo = typeof s.minimum === 'number' ? s.minimum : 0
      const hi = typeof s.maximum === 'number' ? s.maximum : lo + 10
      const span = Math.max(0, Math.floor(hi) - Math.ceil(lo))
      return Math.ceil(lo) + (h % (span + 1))
    }
    case 'boolean':
      return h % 2 === 0
    case 'null':
      return null
    default: {
      let str = `simulated ${fieldName(path)}`
      if (typeof s.maxLength === 'number') str = str.slice(0, s.maxLength)
      if (typeof s.minLength === 'number') str = str.padEnd(s.minLength, '.')
      return str
    }
  }
}

function fromExample(example: Json, seed: number, path: string): Json {
  const h = fnv1a(`${seed}:${path}`)
  if (example === null) return null
  if (Array.isArray(example)) {
    return example.length === 0 ? [] : [fromExample(example[0]!, seed, `${path}[0]`)]
  }
  switch (typeof example) {
    case 'object': {
      const out: { [key: string]: Json } = {}
      for (const [k, v] of Object.entries(example)) out[k] = fromExample(v, seed, `${path}.${k}`)
      return out
    }
    case 'number':
      return Number.isInteger(example) ? h % 10 : (h % 1000) / 1000
    case 'boolean':
      return h % 2 === 0
    default:
      return `simulated ${fieldName(path)}`
  }
}
