import { z } from 'zod'
import type { PxpSeat, PxpTag } from '@/protocols/pxp/core/tags'
import { firstGroups, patternProblem } from './pattern'
import type { ChatTurn } from '../../protocols/pxp/core/prompts'

/**
 * The generic PXP task template a researcher defines in the UI: the system prompt, the names of the
 * two output fields, an optional label set, how two predictions MATCH, and the AGREE prompt the
 * checker model answers with Yes or No. Prompts follow the paper's Examples 1–2 like RAD and DRUG:
 * the system message with the output format, the dialogue so far as chat turns phrased from each
 * message's tag, then the query about the instance. No I/O (regex MATCH runs in a worker thread).
 */

const fieldName = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9 _-]{0,39}$/, 'Use letters, digits, spaces, - or _ (up to 40), starting with a letter.')

export const MATCH_MODES = ['exact', 'case-insensitive', 'set', 'regex', 'numeric'] as const
export type MatchMode = (typeof MATCH_MODES)[number]

export const MatchSpec = z
  .discriminatedUnion('mode', [
    z.object({ mode: z.literal('exact') }),
    z.object({ mode: z.literal('case-insensitive') }),
    /** Both sides are lists split on `separator`; MATCH when the sets of trimmed, case-folded items are equal. */
    z.object({ mode: z.literal('set'), separator: z.string().min(1).max(5).default(',') }),
    /**
     * The first capture group (or the whole match) of `pattern` must be found on both sides and be
     * equal (case-folded). RE2 syntax, run in linear time in a worker thread with a time limit
     * (lib/tasks/pattern.ts): no backreferences, no lookaround.
     */
    z
      .object({
        mode: z.literal('regex'),
        pattern: z.string().min(1, 'Write a pattern.').max(200, 'Keep the pattern under 200 characters.'),
        flags: z
          .string()
          .regex(/^[imsu]*$/, 'Flags may be i, m, s or u.')
          .default('i'),
      })
      .superRefine((spec, ctx) => {
        const problem = patternProblem(spec.pattern, spec.flags)
        if (problem) ctx.addIssue({ code: 'custom', path: ['pattern'], message: problem })
      }),
    /** Both sides parse as numbers; MATCH when |a − b| ≤ tolerance (or ≤ tolerance·max(|a|,|b|) when relative). */
    z.object({
      mode: z.literal('numeric'),
      tolerance: z.coerce.number().min(0).default(0),
      relative: z.boolean().default(false),
    }),
  ])
  .default({ mode: 'case-insensitive' })
export type MatchSpec = z.infer<typeof MatchSpec>

export const TaskTemplate = z.object({
  name: z.string().trim().min(1, 'Name the template.').max(120),
  systemPrompt: z.string().trim().min(1, 'Write the system prompt.').max(20_000),
  /** The question about an instance; {field} is replaced by the instance's input field. */
  queryPrompt: z.string().trim().min(1, 'Write the question about an instance.').max(20_000),
  predictionField: fieldName.default('Prediction'),
  explanationField: fieldName.default('Explanation'),
  /** When given, the prediction must be one of these labels (named in the system prompt). */
  labels: z.array(z.string().trim().min(1).max(200)).max(200).default([]),
  match: MatchSpec,
  /** The checker's question; {A} and {B} are the two explanations. */
  agreePrompt: z
    .string()
    .trim()
    .max(20_000)
    .refine((p) => p.includes('{A}') && p.includes('{B}'), 'The AGREE prompt must contain {A} and {B}.')
    .default('Given A: {A}\nand B: {B}\nare A and B consistent? Respond only with Yes or No.'),
})
export type TaskTemplate = z.infer<typeof TaskTemplate>

const fold = (s: string) => s.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase()

/** A number in the text: the first decimal or scientific literal (commas as thousands separators). */
export function numberIn(s: string): number | null {
  const m = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?|[-+]?\.\d+(?:e[-+]?\d+)?/i.exec(s)
  if (!m) return null
  const n = Number(m[0].replaceAll(',', ''))
  return Number.isFinite(n) ? n : null
}

/**
 * MATCH for a template: a function of the two predictions. Asynchronous because regex MATCH runs in
 * a worker thread (lib/tasks/pattern.ts); it rejects when that worker runs out of time on the texts.
 */
export function matchGeneric(spec: MatchSpec): (a: string, b: string) => Promise<boolean> {
  switch (spec.mode) {
    case 'exact':
      return async (a, b) => a.trim() === b.trim()
    case 'case-insensitive':
      return async (a, b) => fold(a) === fold(b)
    case 'set': {
      const items = (s: string) => new Set(s.split(spec.separator).map(fold).filter(Boolean))
      return async (a, b) => {
        const x = items(a)
        const y = items(b)
        return x.size > 0 && x.size === y.size && [...x].every((i) => y.has(i))
      }
    }
    case 'regex': {
      const problem = patternProblem(spec.pattern, spec.flags)
      if (problem) throw new Error(problem)
      return async (a, b) => {
        const [x, y] = await firstGroups(spec.pattern, spec.flags, [a, b])
        return x != null && y != null && fold(x) === fold(y)
      }
    }
    case 'numeric':
      return async (a, b) => {
        const x = numberIn(a)
        const y = numberIn(b)
        if (x === null || y === null) return false
        const limit = spec.relative ? spec.tolerance * Math.max(Math.abs(x), Math.abs(y)) : spec.tolerance
        return Math.abs(x - y) <= limit + 1e-12
      }
  }
}

export function genericSystemPrompt(t: TaskTemplate): string {
  return [
    t.systemPrompt,
    ...(t.labels.length
      ? [`Your ${t.predictionField.toLowerCase()} must be exactly one of: ${t.labels.join(', ')}.`]
      : []),
    'Adhere to the following output format strictly, no extra text:',
    `${t.predictionField}: <${t.predictionField.toLowerCase()}>`,
    `${t.explanationField}: <${t.explanationField.toLowerCase()}>`,
    'Never write protocol phrases such as "I made a mistake", "You made a mistake" or "This conversation is ratified".',
  ].join('\n')
}

/** The query q: the template's question with {field} filled from the instance input. */
export function genericQuery(t: TaskTemplate, input: Record<string, unknown>): ChatTurn {
  const text = t.queryPrompt.replace(/\{([A-Za-z0-9_ -]{1,60})\}/g, (whole, key: string) => {
    const v = input[key.trim()]
    return v === undefined ? whole : typeof v === 'string' ? v : JSON.stringify(v)
  })
  return { role: 'user', content: text }
}

export function genericAnswer(t: TaskTemplate, answer: { y: string; e: string }): string {
  return `${t.predictionField}: ${answer.y}\n${t.explanationField}: ${answer.e}`
}

/** The phrase before an answer, from its tag (the same shape as the RAD and DRUG phrases). */
export function genericTagPhrase(tag: PxpTag): string {
  switch (tag) {
    case 'INIT':
      return 'This is my initial answer:'
    case 'RATIFY':
      return 'Our answers match. I agree with you. This conversation is ratified.'
    case 'REFUTE':
      return 'I think you made a mistake. I refute your answer. I think:'
    case 'REVISE':
      return 'I think I made a mistake. I revise my answer to:'
    case 'REJECT':
      return 'I disagree with you and reject your answer. My answer is:'
  }
}

/** UPDATE_CONTEXT for a generic task (own messages are the assistant's turns). */
export function genericContextTurn(
  t: TaskTemplate,
  msg: { sender: PxpSeat; tag: PxpTag; y: string; e: string },
): ChatTurn {
  const content =
    msg.tag === 'RATIFY' ? genericTagPhrase('RATIFY') : `${genericTagPhrase(msg.tag)}\n${genericAnswer(t, msg)}`
  return msg.sender === 'm' ? { role: 'assistant', content } : { role: 'user', content }
}

export function genericPrompt(t: TaskTemplate, context: readonly ChatTurn[], query: ChatTurn): ChatTurn[] {
  const system = genericSystemPrompt(t) + (context.length ? '\n\nUse the following as context:' : '')
  return [{ role: 'system', content: system }, ...context, query]
}

export function agreeQuestion(t: TaskTemplate, a: string, b: string): string {
  return t.agreePrompt.replaceAll('{A}', a).replaceAll('{B}', b)
}
