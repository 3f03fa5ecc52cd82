import { z } from 'zod'
import type { DemoRequest } from '@/lib/llm/demo-model'
import { contentText, fnv1a } from '@/lib/llm/text'
import type { AgentContext, ChatMessage, Produced } from '@/lib/server/sdk'
import {
  type LabelItem,
  type LabelMessage,
  type LabelSchema,
  type LabellingMessage,
  type labelling,
  type OptionValue,
  questionOf,
} from '@/protocols/labelling/core'
import { parseJudgement } from '@/protocols/labelling/core/parse'
import { buildRelevancePrompt, RELEVANCE_CALL_PARAMS, RELEVANCE_MAX_TOKENS } from '@/protocols/labelling/core/prompt'
import { parseVariant } from '@/protocols/labelling/core/variants'

/**
 * The LLM labeller (seed 003 part B): an LLM in the annotator seat. Two prompts:
 *
 * - **The paper's relevance prompt** (core/prompt.ts, Figure 1 verbatim, one of 32 variants, optionally
 *   a paraphrase) for a query–document item when the schema's overall question is the 0–2 scale (options
 *   exactly 0, 1, 2). Decoding as the paper's: temperature 0, top_p 1, frequency penalty 0.5, presence
 *   penalty 0, no stop words. The reply is read as the continuation of the prompt's `[{` (core/parse.ts):
 *   with aspects (A) the judges' M and T are kept where the schema asks them, with several judges (M) every
 *   answer is the judges' mean (the protocol's `judges` rule), and only the overall O is the score.
 * - **A schema prompt** for every other item (text, a transcript, a query–document item under another
 *   schema): the item, the guidelines and each question with its options, answered as one JSON object.
 *
 * A reply that cannot be read is an `unparseable` message (the session ends without a label; the paper
 * drops these and counts them, and so do the pages: never a label). A reply that reads but breaks the
 * schema is refused by the protocol's `apply` like any message, and the session stalls, resumable.
 */

type Ctx = AgentContext<typeof labelling>

/** Whether the paper's relevance prompt applies: a query–document item under a 0–2 overall scale. */
export function relevancePromptApplies(schema: LabelSchema, item: LabelItem): boolean {
  if (item.kind !== 'query-doc') return false
  const overall = questionOf(schema, schema.overall)
  const values = overall?.options.map((o) => o.value) ?? []
  return overall?.type === 'ordinal' && values.length === 3 && [0, 1, 2].every((v) => values.includes(v))
}

/** The judges' answers restricted to the schema's questions (a reply's M and T count only where asked). */
function judgesFor(schema: LabelSchema, judges: Array<{ O: number; M?: number; T?: number }>) {
  return judges.map((j) => {
    const out: Record<string, OptionValue> = { [schema.overall]: j.O }
    for (const k of ['M', 'T'] as const)
      if (j[k] !== undefined && k !== schema.overall && questionOf(schema, k)) out[k] = j[k]
    return out
  })
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

async function relevanceLabel(ctx: Ctx): Promise<Produced<LabellingMessage>> {
  if (ctx.fill.kind !== 'llm' || ctx.state.item.kind !== 'query-doc') throw new Error('unreachable')
  const { schema, item } = ctx.state
  const { labeller } = ctx.config
  const variant = parseVariant(labeller.variant)
  const prompt = buildRelevancePrompt(
    variant,
    { query: item.query, description: item.description, narrative: item.narrative, document: item.document },
    labeller.paraphrase,
    { maxDocumentChars: labeller.maxDocumentChars },
  )
  const messages: ChatMessage[] = prompt.messages
  const r = await ctx.llm.chat(
    ctx.fill.model,
    { messages, ...RELEVANCE_CALL_PARAMS, max_tokens: RELEVANCE_MAX_TOKENS },
    { purpose: 'labelling-relevance', stream: ctx.watched },
  )
  const parsed = parseJudgement(r.text, variant)
  const meta = { raw: r.text.slice(0, 4000), prompt: prompt.name, promptChars: prompt.chars }
  if (!parsed.ok) {
    return {
      message: {
        seq: 1,
        sender: 'annotator',
        kind: 'unparseable',
        schemaVersion: schema.version,
        reason: parsed.reason,
      },
      context: messages,
      meta,
      callId: r.callId,
    }
  }
  const judges = judgesFor(schema, parsed.judges)
  const several = judges.length > 1
  const answers: Record<string, OptionValue> = {}
  for (const id of Object.keys(judges[0] ?? {})) {
    const values = judges.map((j) => j[id]).filter((v): v is number => typeof v === 'number')
    if (values.length === judges.length) answers[id] = several ? mean(values) : (values[0] as number)
  }
  const message: LabelMessage = {
    seq: 1,
    sender: 'annotator',
    kind: 'label',
    schemaVersion: schema.version,
    answers,
    ...(several ? { judges } : {}),
  }
  return {
    message,
    context: messages,
    meta: { ...meta, score: parsed.score, binary: parsed.binary },
    callId: r.callId,
  }
}

/** The schema prompt: the item, the guidelines and the questions; the answer is one JSON object. */
export function schemaPrompt(schema: LabelSchema, item: LabelItem): string {
  const body =
    item.kind === 'text'
      ? `${item.title ? `# ${item.title}\n` : ''}${item.text}`
      : item.kind === 'query-doc'
        ? [
            `Query: ${item.query}`,
            item.description ? `Description: ${item.description}` : '',
            item.narrative ? `Narrative: ${item.narrative}` : '',
            '---BEGIN DOCUMENT---',
            item.document.slice(0, 16_000),
            '---END DOCUMENT---',
          ]
            .filter(Boolean)
            .join('\n')
        : [`Transcript: ${item.title}`, ...item.turns.map((t) => `[${t.index}] ${t.who}: ${t.text}`)].join('\n')
  const questions = schema.questions
    .map(
      (q) =>
        `- "${q.id}"${q.required ? '' : ' (optional)'}: ${q.text}\n${q.options.map((o) => `    ${JSON.stringify(o.value)} = ${o.label}`).join('\n')}`,
    )
    .join('\n')
  return [
    'You are labelling an item for a study. Read the guidelines and the item, then answer every question.',
    schema.guidelines ? `# Guidelines\n${schema.guidelines}` : '',
    `# Item\n${body}`,
    `# Questions\n${questions}`,
    '# Answer\nReply with one JSON object mapping each question id to the value of the option you choose, and nothing else.',
  ]
    .filter(Boolean)
    .join('\n\n')
}

async function schemaLabel(ctx: Ctx): Promise<Produced<LabellingMessage>> {
  if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
  const { schema, item } = ctx.state
  const prompt = schemaPrompt(schema, item)
  const messages: ChatMessage[] = [{ role: 'user', content: prompt }]
  const r = await ctx.llm.chat(
    ctx.fill.model,
    { messages, temperature: 0, max_tokens: 256, response_format: { type: 'json_object' } },
    { purpose: 'labelling-schema', stream: ctx.watched },
  )
  const answers = readSchemaAnswers(schema, r.text)
  const meta = { raw: r.text.slice(0, 4000), prompt: 'schema' }
  if (!answers.ok)
    return {
      message: {
        seq: 1,
        sender: 'annotator',
        kind: 'unparseable',
        schemaVersion: schema.version,
        reason: answers.reason,
      },
      context: messages,
      meta,
      callId: r.callId,
    }
  return {
    message: { seq: 1, sender: 'annotator', kind: 'label', schemaVersion: schema.version, answers: answers.value },
    context: messages,
    meta,
    callId: r.callId,
  }
}

const AnswerObject = z.record(z.string().max(32), z.union([z.number().finite(), z.string().max(100)]))

/**
 * A schema reply as answers: the first JSON object in the text (fences allowed), each value read as the
 * option it names ("2" is the option 2). Unreadable → a reason (counted, never a label); the values'
 * validity is `apply`'s to judge.
 */
export function readSchemaAnswers(
  schema: LabelSchema,
  text: string,
): { ok: true; value: Record<string, OptionValue> } | { ok: false; reason: string } {
  if (text.length > 20_000) return { ok: false, reason: 'The reply is over 20,000 characters.' }
  const start = text.indexOf('{')
  const end = text.lastIndexOf('}')
  if (start < 0 || end < start) return { ok: false, reason: 'The reply holds no JSON object.' }
  let raw: unknown
  try {
    raw = JSON.parse(text.slice(start, end + 1))
  } catch {
    return { ok: false, reason: 'The reply is not valid JSON.' }
  }
  const parsed = AnswerObject.safeParse(raw)
  if (!parsed.success) return { ok: false, reason: 'The reply is not an object of answers.' }
  const value: Record<string, OptionValue> = {}
  for (const [id, v] of Object.entries(parsed.data)) {
    const q = questionOf(schema, id)
    if (!q) continue
    value[id] = q.options.find((o) => o.value === v || String(o.value) === String(v))?.value ?? v
  }
  return { ok: true, value }
}

/** The llm agent of the annotator seat. */
export async function llmLabeller(ctx: Ctx): Promise<Produced<LabellingMessage>> {
  return relevancePromptApplies(ctx.state.schema, ctx.state.item) ? relevanceLabel(ctx) : schemaLabel(ctx)
}

// ───────────────────────────── the offline demo model ─────────────────────────────

const WORD = /[a-z][a-z-]{2,}/g
const STOP = new Set(['the', 'and', 'for', 'how', 'what', 'are', 'with', 'from', 'that', 'this', 'its'])

/**
 * The demo model as a relevance labeller (clearly simulated): the share of the query's words found in the
 * page decides O (≥ 2/3 → 2, ≥ 1/3 → 1, else 0); M follows O, T is 1; several judges (M) vary by one
 * step on a hash of the prompt, so the mean is not always an option. Any other labelling prompt gets the
 * first option of every question. Deterministic: the same request, the same reply.
 */
export function labellingDemo(req: DemoRequest): string | undefined {
  const prompt = req.messages.map((m) => contentText(m.content)).join('\n')
  if (prompt.includes('---BEGIN WEB PAGE CONTENT---') && prompt.trimEnd().endsWith('[{')) {
    const query = /A person has typed (.*?) into a search engine\./.exec(prompt)?.[1] ?? ''
    const page = /---BEGIN WEB PAGE CONTENT---\n([\s\S]*?)\n---END WEB PAGE CONTENT---/.exec(prompt)?.[1] ?? ''
    const words = (query.toLowerCase().match(WORD) ?? []).filter((w) => !STOP.has(w))
    const text = page.toLowerCase()
    const share = words.length ? words.filter((w) => text.includes(w.slice(0, 5))).length / words.length : 0
    const o = share >= 2 / 3 ? 2 : share >= 1 / 3 ? 1 : 0
    const aspects = prompt.includes('(M).')
    const judges = prompt.includes('five search engine raters') ? 5 : 1
    const h = fnv1a(prompt)
    const one = (i: number) => {
      const wobble = judges > 1 && (h >> i) % 4 === 0 ? (o === 2 ? -1 : 1) : 0
      const oi = o + wobble
      return aspects ? `"M": ${oi}, "T": 1, "O": ${oi}` : `"O": ${oi}`
    }
    return `${Array.from({ length: judges }, (_, i) => one(i)).join('}, {')}}]`
  }
  if (prompt.startsWith('You are labelling an item for a study.')) {
    const answers: Record<string, unknown> = {}
    for (const m of prompt.matchAll(/^- "([^"]+)"[^\n]*\n {4}(\S+) = /gm))
      answers[m[1] as string] = JSON.parse(m[2] as string)
    return JSON.stringify({ ...answers })
  }
  return undefined
}
