import { z } from 'zod'

/**
 * The label schema of a labelling run: the questions an annotator (a person or a model) answers about
 * an item, which one counts as the item's label (`overall`), whether a rationale is asked, whether a
 * transcript's turns get labels of their own, and the guidelines shown beside the form. Versioned:
 * every label records the schema version it answered, and `apply` refuses a label of another version.
 */

export const QUESTION_ID = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/
export const MAX_GUIDELINES = 20_000
export const MAX_RATIONALE = 4_000

export const OptionValue = z.union([z.number().finite(), z.string().trim().min(1).max(100)])
export type OptionValue = z.output<typeof OptionValue>

export const LabelOption = z.object({
  value: OptionValue,
  label: z.string().trim().min(1).max(300),
})
export type LabelOption = z.output<typeof LabelOption>

export const Question = z
  .object({
    id: z.string().regex(QUESTION_ID, 'A question id is a letter, then up to 31 letters, digits, _ or -.'),
    text: z.string().trim().min(1).max(1000),
    type: z.enum(['ordinal', 'nominal']),
    options: z.array(LabelOption).min(2, 'A question has at least 2 options.').max(10, 'At most 10 options.'),
    required: z.boolean().default(true),
  })
  .superRefine((q, ctx) => {
    const values = q.options.map((o) => String(o.value))
    if (new Set(values).size !== values.length)
      ctx.addIssue({ code: 'custom', path: ['options'], message: `Question ${q.id} has two options with one value.` })
    if (q.type === 'ordinal' && q.options.some((o) => typeof o.value !== 'number'))
      ctx.addIssue({
        code: 'custom',
        path: ['options'],
        message: `An ordinal question's values are numbers (${q.id}).`,
      })
  })
export type Question = z.output<typeof Question>

export const LabelSchema = z
  .object({
    version: z.number().int().min(1),
    questions: z.array(Question).min(1, 'Ask at least one question.').max(10, 'At most 10 questions.'),
    /** The question whose answer is the item's label (default: the last). */
    overall: z.string().regex(QUESTION_ID).optional(),
    rationale: z.enum(['off', 'optional', 'required']).default('off'),
    /** Labels per turn of a transcript item (besides the item's own). */
    perTurn: z.boolean().default(false),
    /** Markdown shown beside the form. */
    guidelines: z.string().max(MAX_GUIDELINES, `Guidelines are at most ${MAX_GUIDELINES} characters.`).default(''),
  })
  .superRefine((s, ctx) => {
    const ids = s.questions.map((q) => q.id)
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: 'custom', path: ['questions'], message: 'Two questions have one id.' })
    if (s.overall !== undefined && !ids.includes(s.overall))
      ctx.addIssue({ code: 'custom', path: ['overall'], message: `The overall question ${s.overall} is not asked.` })
  })
  .transform((s) => ({ ...s, overall: s.overall ?? (s.questions.at(-1) as Question).id }))
export type LabelSchema = z.output<typeof LabelSchema>
export type LabelSchemaInput = z.input<typeof LabelSchema>

/** The question of an id (undefined when the schema does not ask it). */
export const questionOf = (schema: LabelSchema, id: string): Question | undefined =>
  schema.questions.find((q) => q.id === id)

/** Whether `value` is one of the question's options (numbers and strings compared as themselves). */
export const isOption = (q: Question, value: unknown): boolean => q.options.some((o) => o.value === value)

/** The 0-based position of a value among the question's options (-1: not an option). */
export const optionIndex = (q: Question, value: unknown): number => q.options.findIndex((o) => o.value === value)

// ---------------------------------------------------------------------------------------------------
// Presets

/**
 * The TREC-style 0–2 relevance scale and instructions of Thomas et al. (2024), "Large language models
 * can accurately predict searcher preferences" (Figure 1), verbatim.
 */
export const RELEVANCE_SCALE_TEXT = {
  2: 'highly relevant, very helpful for this query',
  1: 'relevant, may be partly helpful but might contain other irrelevant content',
  0: 'not relevant, should never be shown for this query',
} as const
export const RELEVANCE_GUIDELINES =
  'Assume that you are writing a report on the subject of the topic. If you would use any of the information contained in the web page in such a report, mark it 1. If the web page is primarily about the topic, or contains vital information about the topic, mark it 2. Otherwise, mark it 0.'

const relevanceOptions = [2, 1, 0].map((v) => ({
  value: v,
  label: `${v} = ${RELEVANCE_SCALE_TEXT[v as 0 | 1 | 2]}`,
}))
const zeroToTwo = (what: string) => [
  { value: 0, label: `0 = ${what}: not at all` },
  { value: 1, label: `1 = ${what}: partly` },
  { value: 2, label: `2 = ${what}: fully` },
]

/** The overall relevance question O on the paper's scale (options in the paper's order: 2, 1, 0). */
const overallRelevance: Question = {
  id: 'O',
  text: 'Considering the aspects above and the relative importance of each, decide on a final score: how relevant is the page to the query?',
  type: 'ordinal',
  options: relevanceOptions,
  required: true,
}

/** Relevance 0–2, the overall score only. */
export const RELEVANCE_0_2: LabelSchema = {
  version: 1,
  questions: [{ ...overallRelevance, text: 'How relevant is the web page to the query?' }],
  overall: 'O',
  rationale: 'off',
  perTurn: false,
  guidelines: RELEVANCE_GUIDELINES,
}

/**
 * Relevance 0–2 with the paper's aspects before the overall score: M (how well the content matches a
 * likely intent of the query) and T (how trustworthy the page is); the aspects are not otherwise
 * defined in the paper, so their options only say how much.
 */
export const RELEVANCE_0_2_ASPECTS: LabelSchema = {
  version: 1,
  questions: [
    {
      id: 'M',
      text: 'How well does the content match a likely intent of the query?',
      type: 'ordinal',
      options: zeroToTwo('matches the intent'),
      required: true,
    },
    {
      id: 'T',
      text: 'How trustworthy is the web page?',
      type: 'ordinal',
      options: zeroToTwo('trustworthy'),
      required: true,
    },
    overallRelevance,
  ],
  overall: 'O',
  rationale: 'off',
  perTurn: false,
  guidelines: RELEVANCE_GUIDELINES,
}

/** A generic nominal question: yes, no, or unsure (with an optional rationale). */
export const YES_NO_UNSURE: LabelSchema = {
  version: 1,
  questions: [
    {
      id: 'answer',
      text: 'Does the item meet the criterion in the guidelines?',
      type: 'nominal',
      options: [
        { value: 'yes', label: 'Yes' },
        { value: 'no', label: 'No' },
        { value: 'unsure', label: 'Unsure' },
      ],
      required: true,
    },
  ],
  overall: 'answer',
  rationale: 'optional',
  perTurn: false,
  guidelines:
    'Answer yes when the item meets the criterion the study describes, no when it does not, and unsure when you cannot tell.',
}

export const LABEL_PRESETS = {
  'relevance-0-2': RELEVANCE_0_2,
  'relevance-0-2-aspects': RELEVANCE_0_2_ASPECTS,
  'yes-no-unsure': YES_NO_UNSURE,
} as const satisfies Record<string, LabelSchema>
export type LabelPresetId = keyof typeof LABEL_PRESETS
