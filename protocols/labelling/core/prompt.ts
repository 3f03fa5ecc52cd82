/**
 * The relevance-labelling prompt of Thomas et al. (seed 003 part B, §B.3, Figure 1), verbatim, for
 * one query–document item and one of the 32 variants (./variants.ts), optionally paraphrased.
 *
 * Choices where the figure leaves room (each is documented in the reference's ⚠ list):
 * - One user message holds the whole prompt (the paper shows one text, no system/user split). Its
 *   last line is the open `[{` under "# Results" that primes JSON output; the model's reply is read
 *   as the CONTINUATION of that `[{` (./parse.ts puts it back in front).
 * - The `# …` headings and the `---BEGIN WEB PAGE CONTENT---` delimiters: the dump shows bare
 *   headings and em-dashes, LaTeX's rendering of `---` (RAGElo writes `---BEGIN DOCUMENT CONTENT---`).
 * - The role sentence is its own line before "Given a query …" (RAGElo joins them with a space).
 * - "They were looking for: [description] [narrative]": only the parts that are on AND present,
 *   joined by one space; the line is left out when neither is (the figure shows only D and N both).
 * - The JSON example: with A, the figure's `[{"M": 2, "T": 1, "O": 1}, {"M": 1...`; without A,
 *   RAGElo's default `[{"O": 1}, {"O": 2}, {"O": 0...` (the paper does not show it). The figure's
 *   ". . ." is the typeset ellipsis, written "..." here. The example is the same with or without M.
 * - The query, description and narrative have their whitespace runs collapsed to one space (TREC
 *   topic fields are wrapped at ~72 columns); the page text is kept as it is, but bounded: beyond
 *   `maxDocumentChars` it is cut and a marker says how much was left out, so a huge document cannot
 *   overflow the model's context.
 */
import { z } from 'zod'
import { type Paraphrase, paraphraseSchema, type Variant, codeOf, parseVariant } from './variants'

/** The decoding of §B.2: temperature 0, top_p 1, frequency penalty 0.5, presence penalty 0, no stop words. */
export const RELEVANCE_CALL_PARAMS = Object.freeze({
  temperature: 0,
  top_p: 1,
  frequency_penalty: 0.5,
  presence_penalty: 0,
})

/**
 * Ours, not the paper's (which sets no limit): five judges × `{"M": 2, "T": 1, "O": 1}` is about 80
 * tokens, so 256 leaves room and stops a runaway reply.
 */
export const RELEVANCE_MAX_TOKENS = 256

/** Ours: about 4,000 tokens of page text; Robust04 documents are almost all shorter. */
export const DEFAULT_MAX_DOCUMENT_CHARS = 16_000

export const ROLE_LINE = 'You are a search quality rater evaluating the relevance of web pages.'

/** The span a paraphrase's `instructions` replaces (§B.5.5). */
export const INSTRUCTIONS_SPAN = [
  'Given a query and a web page, you must provide a score on an integer scale of 0 to 2 with the following meanings:',
  '2 = highly relevant, very helpful for this query',
  '1 = relevant, may be partly helpful but might contain other irrelevant content',
  '0 = not relevant, should never be shown for this query',
  'Assume that you are writing a report on the subject of the topic. If you would use any of the information contained in the web page in such a report, mark it 1. If the web page is primarily about the topic, or contains vital information about the topic, mark it 2. Otherwise, mark it 0.',
].join('\n')

export const ASPECT_LINES = [
  'Measure how well the content matches a likely intent of the query (M).',
  'Measure how trustworthy the web page is (T).',
] as const

export const JUDGES_LINE =
  'We asked five search engine raters to evaluate the relevance of the web page for the query. Each rater used their own independent judgement.'

export const EXAMPLE_WITH_ASPECTS = '[{"M": 2, "T": 1, "O": 1}, {"M": 1...'
/** RAGElo's default when aspects are off; the paper does not show this case. */
export const EXAMPLE_WITHOUT_ASPECTS = '[{"O": 1}, {"O": 2}, {"O": 0...'

export const BEGIN_PAGE = '---BEGIN WEB PAGE CONTENT---'
export const END_PAGE = '---END WEB PAGE CONTENT---'

/** The open JSON the prompt ends with; the model's reply continues it. */
export const PRIMER = '[{'

/** The marker put after a cut document (what was kept and of how much). */
export function truncationMarker(kept: number, total: number): string {
  return `[... document truncated: first ${kept} of ${total} characters shown]`
}

/** The span a paraphrase's `steps` replaces, for a variant (its aspect and raters lines included). */
export function stepsSpan(v: Variant): string {
  return [
    'Split this problem into steps:',
    'Consider the underlying intent of the search.',
    ...(v.A ? ASPECT_LINES : []),
    'Consider the aspects above and the relative importance of each, and decide on a final score (O).',
    ...(v.M ? [JUDGES_LINE] : []),
    'Produce a JSON array of scores without providing any reasoning.',
  ].join('\n')
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim()

/** One item to label: a query (the TREC title), optional description and narrative, the page text. */
export const relevanceItemSchema = z.object({
  query: z
    .string()
    .max(2000, { message: 'the query has at most 2,000 characters' })
    .transform(oneLine)
    .pipe(z.string().min(1, { message: 'the query is not blank' })),
  description: z.string().max(10_000, { message: 'the description has at most 10,000 characters' }).optional(),
  narrative: z.string().max(20_000, { message: 'the narrative has at most 20,000 characters' }).optional(),
  /** The page text (a caller with a title puts it in front). Bounded by `maxDocumentChars`, not here. */
  document: z.string(),
})
export type RelevanceItem = z.input<typeof relevanceItemSchema>

export type PromptMessage = { role: 'user'; content: string }

export interface RelevancePrompt {
  /** One user message (see the header). */
  messages: PromptMessage[]
  /** The prompt text (the message's content). */
  text: string
  /** Its length in characters (§B.5.4 models error against prompt length). */
  chars: number
  /** `-DNA-` or `-DNA-/p1`. */
  name: string
  /** Whether the page text was cut at `maxDocumentChars`. */
  documentTruncated: boolean
  /** Fields the variant turns on that the item lacks (left out of the prompt): the caller may warn. */
  missing: Array<'description' | 'narrative'>
}

export interface PromptOptions {
  /** Page text beyond this many characters is cut, with a marker (default 16,000). */
  maxDocumentChars?: number
}

/** The text cut to at most `max` characters (never inside a surrogate pair), and whether it was. */
function bound(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false }
  let end = max
  const c = text.charCodeAt(end - 1)
  if (c >= 0xd800 && c <= 0xdbff) end -= 1
  return { text: `${text.slice(0, end)}\n${truncationMarker(end, text.length)}`, truncated: true }
}

/**
 * The prompt for one item under a variant (a code like `-DNA-` or the flags), with a paraphrase of
 * that variant if given. Throws an Error when the variant, item or paraphrase is invalid, or the
 * paraphrase belongs to another variant.
 */
export function buildRelevancePrompt(
  variant: Variant | string,
  item: RelevanceItem,
  paraphrase?: Paraphrase,
  options: PromptOptions = {},
): RelevancePrompt {
  const v = typeof variant === 'string' ? parseVariant(variant) : variant
  const code = codeOf(v)
  const parsedItem = relevanceItemSchema.safeParse(item)
  if (!parsedItem.success)
    throw new Error(
      `The item cannot be labelled: ${parsedItem.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ')}`,
    )
  const it = parsedItem.data
  let p: Paraphrase | undefined
  if (paraphrase) {
    const pp = paraphraseSchema.safeParse(paraphrase)
    if (!pp.success) throw new Error(`The paraphrase is invalid: ${pp.error.issues[0]?.message ?? 'invalid'}`)
    p = pp.data
    if (codeOf(p.parent) !== code)
      throw new Error(`The paraphrase ${p.parent}/${p.id} rewrites the ${p.parent} prompt, not ${code}.`)
  }
  const max = options.maxDocumentChars ?? DEFAULT_MAX_DOCUMENT_CHARS
  if (!Number.isInteger(max) || max < 1) throw new Error('maxDocumentChars is a positive integer.')

  const description = it.description !== undefined ? oneLine(it.description) : ''
  const narrative = it.narrative !== undefined ? oneLine(it.narrative) : ''
  const missing: RelevancePrompt['missing'] = []
  if (v.D && !description) missing.push('description')
  if (v.N && !narrative) missing.push('narrative')
  const lookingFor = [v.D ? description : '', v.N ? narrative : ''].filter((s) => s !== '')
  const page = bound(it.document, max)

  const lines = [
    ...(v.R ? [ROLE_LINE] : []),
    p?.spans.instructions ?? INSTRUCTIONS_SPAN,
    '',
    '# Query',
    `A person has typed ${it.query} into a search engine.`,
    ...(lookingFor.length ? [`They were looking for: ${lookingFor.join(' ')}`] : []),
    '',
    '# Result',
    'Consider the following web page.',
    BEGIN_PAGE,
    page.text,
    END_PAGE,
    '',
    '# Instructions',
    `${p?.spans.steps ?? stepsSpan(v)} Example: ${v.A ? EXAMPLE_WITH_ASPECTS : EXAMPLE_WITHOUT_ASPECTS}`,
    '',
    '# Results',
    PRIMER,
  ]
  const text = lines.join('\n')
  return {
    messages: [{ role: 'user', content: text }],
    text,
    chars: text.length,
    name: p ? `${code}/${p.id}` : code,
    documentTruncated: page.truncated,
    missing,
  }
}
