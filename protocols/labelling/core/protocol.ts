import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError } from '@/lib/protocols/types'
import { LabelItem } from '@/protocols/labelling/core/items'
import {
  isOption,
  LabelSchema,
  MAX_RATIONALE,
  OptionValue,
  type Question,
  questionOf,
} from '@/protocols/labelling/core/schema'
import { PAPER_BEST_VARIANT, paraphraseSchema, variantCode } from '@/protocols/labelling/core/variants'

/**
 * Labelling (issue 25): one annotator seat labels one item once. A run of N annotators per item has N
 * sessions per item (its repetitions), each with a claimable annotator seat, a named person or an LLM.
 * The label answers the run's versioned label schema (schema.ts); `apply` holds every label to it:
 * the schema version, every required answer, values among each question's options, the rationale rule,
 * per-turn labels only for turns the transcript has, one message per session. An LLM reply that could
 * not be parsed is recorded as `unparseable` (the session ends without a label; counted, never a label).
 *
 * Judges: the paper's multiple-judges prompt (M) has one call simulate five raters. Such a label carries
 * each judge's answers in `judges` (each a valid option value), and its answers may be the judges'
 * means (an ordinal question's mean need not be an option); `apply` checks each such mean to 1e-9.
 */
export const LABELLING_ID = 'labelling'
const MEAN_TOLERANCE = 1e-9

/**
 * How an LLM in the annotator seat labels (server/llm-labeller.ts): the paper's prompt variant (the five
 * features R D N A M, core/variants.ts; default `-DNA-`, the paper's best), optionally a paraphrase of
 * it, and the most page text the prompt holds. A person's label ignores it.
 */
export const LabellerSettings = z
  .object({
    variant: variantCode.default(PAPER_BEST_VARIANT),
    paraphrase: paraphraseSchema.optional(),
    maxDocumentChars: z.number().int().min(1_000).max(200_000).optional(),
  })
  .refine((l) => !l.paraphrase || l.paraphrase.parent === l.variant, {
    message: "A paraphrase belongs to the variant it rewrites: its parent must be the labeller's variant.",
    path: ['paraphrase', 'parent'],
  })
export type LabellerSettings = z.output<typeof LabellerSettings>

export const LabellingConfig = z.object({
  schema: LabelSchema,
  labeller: LabellerSettings.default({ variant: PAPER_BEST_VARIANT }),
})
export type LabellingConfig = z.output<typeof LabellingConfig>

const Answers = z.record(z.string().max(32), OptionValue)

export const LabelMessage = z.object({
  seq: z.literal(1),
  sender: z.literal('annotator'),
  kind: z.literal('label'),
  schemaVersion: z.number().int().min(1),
  answers: Answers,
  rationale: z.string().max(MAX_RATIONALE).optional(),
  /** Per-turn labels of a transcript: turn index → answers. */
  turns: z.record(z.string().regex(/^\d{1,6}$/), Answers).optional(),
  /** Milliseconds from the item being shown to the label being sent (a person's form measures it). */
  elapsedMs: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400_000)
    .optional(),
  /** The simulated judges' answers of a multiple-judges prompt. */
  judges: z.array(Answers).min(1).max(10).optional(),
})
export const UnparseableMessage = z.object({
  seq: z.literal(1),
  sender: z.literal('annotator'),
  kind: z.literal('unparseable'),
  schemaVersion: z.number().int().min(1),
  reason: z.string().trim().min(1).max(2000),
})
export const LabellingMessage = z.discriminatedUnion('kind', [LabelMessage, UnparseableMessage])
export type LabelMessage = z.output<typeof LabelMessage>
export type LabellingMessage = z.output<typeof LabellingMessage>

export interface LabellingState {
  schema: LabelSchema
  item: LabelItem
  messages: LabellingMessage[]
}

export type LabellingDoneReason = 'labelled' | 'unparseable'
export type LabellingAsk = Ask<'annotator', string, 'label'>

export const LABELLING_ERROR_CODES = [
  'over',
  'schema-version',
  'unknown-question',
  'missing-answer',
  'invalid-value',
  'rationale-off',
  'rationale-required',
  'turns-off',
  'unknown-turn',
  'judges-invalid',
  'judges-mean',
] as const
export type LabellingErrorCode = (typeof LABELLING_ERROR_CODES)[number]

export class LabellingError extends ProtocolError<LabellingErrorCode> {
  constructor(code: LabellingErrorCode, message: string) {
    super(LABELLING_ID, code, message)
  }
}

function next(s: LabellingState): LabellingAsk | Done<LabellingDoneReason> {
  const m = s.messages[0]
  if (m) return { done: true, reason: m.kind === 'label' ? 'labelled' : 'unparseable' }
  return { done: false, seat: 'annotator', j: 1, kind: 'label' }
}

const show = (v: unknown) => JSON.stringify(v)
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

/** Checks one set of answers (the item's, a judge's or a turn's) against the schema. */
function checkAnswers(
  schema: LabelSchema,
  answers: Record<string, OptionValue>,
  where: string,
  { requireAll, means }: { requireAll: boolean; means?: Map<string, number> },
) {
  for (const [id, value] of Object.entries(answers)) {
    const q = questionOf(schema, id)
    if (!q) throw new LabellingError('unknown-question', `${where}: the schema asks no question ${show(id)}.`)
    if (isOption(q, value)) continue
    const m = means?.get(id)
    if (m !== undefined && typeof value === 'number') {
      if (Math.abs(value - m) <= MEAN_TOLERANCE) continue
      throw new LabellingError(
        'judges-mean',
        `${where}: the answer to ${id} is ${value}, but the judges' mean is ${m}.`,
      )
    }
    throw new LabellingError(
      'invalid-value',
      `${where}: ${show(value)} is not an option of ${id} (${q.options.map((o) => show(o.value)).join(', ')}).`,
    )
  }
  if (requireAll)
    for (const q of schema.questions)
      if (q.required && !(q.id in answers))
        throw new LabellingError('missing-answer', `${where}: question ${q.id} is required.`)
}

/** The judges' mean answer per ordinal question every judge answered. */
function judgesMeans(schema: LabelSchema, judges: Array<Record<string, OptionValue>>): Map<string, number> {
  const out = new Map<string, number>()
  for (const q of schema.questions) {
    if (q.type !== 'ordinal') continue
    const values = judges.map((j) => j[q.id])
    if (values.every((v): v is number => typeof v === 'number')) out.set(q.id, mean(values))
  }
  return out
}

function checkLabel(s: LabellingState, m: LabelMessage) {
  const { schema } = s
  let means: Map<string, number> | undefined
  if (m.judges) {
    m.judges.forEach((j, i) => {
      try {
        checkAnswers(schema, j, `judge ${i + 1}`, { requireAll: true })
      } catch (err) {
        if (err instanceof LabellingError) throw new LabellingError('judges-invalid', err.message)
        throw err
      }
    })
    means = judgesMeans(schema, m.judges)
    const overall = questionOf(schema, schema.overall) as Question
    const o = m.answers[schema.overall]
    const om = means.get(overall.id)
    if (om === undefined || typeof o !== 'number' || Math.abs(o - om) > MEAN_TOLERANCE)
      throw new LabellingError(
        'judges-mean',
        `With judges, the answer to ${overall.id} is the judges' mean (${om ?? 'none: the question is not ordinal'}), not ${show(o)}.`,
      )
  }
  checkAnswers(schema, m.answers, 'The label', { requireAll: true, means })
  const rationale = m.rationale?.trim() ?? ''
  if (schema.rationale === 'off' && m.rationale !== undefined)
    throw new LabellingError('rationale-off', 'This schema asks for no rationale.')
  if (schema.rationale === 'required' && !rationale)
    throw new LabellingError('rationale-required', 'This schema asks for a rationale.')
  if (m.turns && Object.keys(m.turns).length) {
    if (!schema.perTurn) throw new LabellingError('turns-off', 'This schema asks for no per-turn labels.')
    if (s.item.kind !== 'transcript')
      throw new LabellingError('turns-off', `Per-turn labels are for transcript items; this item is a ${s.item.kind}.`)
    const indices = new Set(s.item.turns.map((t) => t.index))
    for (const [index, answers] of Object.entries(m.turns)) {
      if (!indices.has(Number(index))) throw new LabellingError('unknown-turn', `The transcript has no turn ${index}.`)
      checkAnswers(schema, answers, `Turn ${index}`, { requireAll: false })
    }
  }
}

function apply(s: LabellingState, raw: LabellingMessage): LabellingState {
  const m = LabellingMessage.parse(raw)
  if (s.messages.length) throw new LabellingError('over', 'The item is labelled already: one label per session.')
  if (m.schemaVersion !== s.schema.version)
    throw new LabellingError(
      'schema-version',
      `The label answers schema version ${m.schemaVersion}; this session asks version ${s.schema.version}.`,
    )
  if (m.kind === 'label') checkLabel(s, m)
  return { ...s, messages: [m] }
}

export const LABELLING_SEATS = [{ name: 'annotator', label: 'Annotator', kinds: ['human', 'llm'] }] as const

export const labelling: Protocol<
  LabellingConfig,
  LabellingState,
  LabellingMessage,
  LabelItem,
  LabellingAsk,
  Done<LabellingDoneReason>
> = {
  id: LABELLING_ID,
  version: '1',
  label: 'Labelling (items, N annotators, LLM labels)',
  config: LabellingConfig,
  message: LabellingMessage,
  instance: LabelItem,
  seats: LABELLING_SEATS,
  init: (config, item) => ({ schema: config.schema, item, messages: [] }),
  next,
  apply,
}
