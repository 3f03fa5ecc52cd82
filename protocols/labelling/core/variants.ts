/**
 * The prompt variants of Thomas et al., "Large language models can accurately predict searcher
 * preferences" (SIGIR 2024; seed 003 part B, §B.3): five features, each on or off, give 2⁵ = 32
 * templates.
 *
 *   R  role         the sentence "You are a search quality rater evaluating the relevance of web pages."
 *   D  description  the TREC topic's description
 *   N  narrative    the TREC topic's narrative
 *   A  aspects      rate intent match (M) and trustworthiness (T) before the overall score (O)
 *   M  multiple     one call simulates five raters
 *
 * A variant is named as the paper names it: the five positions R D N A M in that order, the
 * feature's letter when on and `-` when off (`-----`, `R----`, `-DNA-`, `R---M`, `RDNAM`).
 *
 * A paraphrase (§B.5.5) is a child of one variant that rewrites the two spans the paper rewrote:
 * `instructions` ("Given a query and a web page … Otherwise, mark it 0.") and `steps` ("Split this
 * problem into steps: … Produce a JSON array of scores without providing any reasoning."). It is
 * named `<variant>/<id>`, e.g. `-DNA-/p1`. Its text is written for its parent, so the `steps` span
 * replaces the parent's aspect and five-raters lines too (they sit inside that span).
 */
import { z } from 'zod'

export const FEATURES = ['R', 'D', 'N', 'A', 'M'] as const
export type Feature = (typeof FEATURES)[number]

export const FEATURE_NAMES: Record<Feature, string> = {
  R: 'role',
  D: 'description',
  N: 'narrative',
  A: 'aspects',
  M: 'multiple judges',
}

/** Which of the five features are on. */
export type Variant = Record<Feature, boolean>

const CODE = /^[R-][D-][N-][A-][M-]$/

/** A variant's code: five characters, position i holding FEATURES[i] or `-`. */
export const variantCode = z
  .string()
  .trim()
  .refine((s) => CODE.test(s), {
    message:
      'a prompt variant is five characters, R D N A M in that order with "-" for a feature that is off (e.g. "-DNA-", "R---M", "-----")',
  })

/** The variant a code names; throws an Error with the reason when the code is not one. */
export function parseVariant(code: string): Variant {
  const r = variantCode.safeParse(code)
  if (!r.success) throw new Error(`"${code}" is not a prompt variant: ${r.error.issues[0]?.message ?? 'invalid'}`)
  const s = r.data
  return { R: s[0] === 'R', D: s[1] === 'D', N: s[2] === 'N', A: s[3] === 'A', M: s[4] === 'M' }
}

export function formatVariant(v: Variant): string {
  return FEATURES.map((f) => (v[f] ? f : '-')).join('')
}

/** The variant as a code, whichever form it came in. */
export function codeOf(v: Variant | string): string {
  return typeof v === 'string' ? formatVariant(parseVariant(v)) : formatVariant(v)
}

/** k-element subsets of FEATURES in lexicographic order of their positions. */
function combinations(k: number, from = 0): Feature[][] {
  if (k === 0) return [[]]
  const out: Feature[][] = []
  for (let i = from; i <= FEATURES.length - k; i++)
    for (const rest of combinations(k - 1, i + 1)) out.push([FEATURES[i] as Feature, ...rest])
  return out
}

/**
 * All 32 variants in the row order of the paper's Table 2: by number of features on (0, 1, …, 5),
 * and within a count by the features' positions in R D N A M, lexicographically. This reproduces the
 * 26 rows the dump lists (§B.5.2: `-----`, `R----`, `-D---`, … `RD---`, `R-N--`, … `--NAM`) and
 * puts `RDNA-`, `RDN-M`, `RD-AM`, `R-NAM`, `-DNAM` at 27–31 and `RDNAM` at 32.
 */
export const TABLE2_ORDER: readonly string[] = Object.freeze(
  [0, 1, 2, 3, 4, 5].flatMap((k) =>
    combinations(k).map((on) => formatVariant(Object.fromEntries(FEATURES.map((f) => [f, on.includes(f)])) as Variant)),
  ),
)

/** The paper's baseline (row 1) and its best prompt by design (row 23, κ = 0.64). */
export const BASELINE_VARIANT = '-----'
export const PAPER_BEST_VARIANT = '-DNA-'

/** A paraphrase's id: a short name, unique among its parent's paraphrases ("p1", "13"). */
export const paraphraseId = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, {
    message: 'a paraphrase id is 1–40 letters, digits, "_", "." or "-", starting with a letter or digit',
  })

/** A rewritten span: non-blank, at most 8,000 characters (the originals are under 700). */
const span = z
  .string()
  .trim()
  .min(1, { message: 'a rewritten span is not blank' })
  .max(8000, { message: 'a rewritten span has at most 8,000 characters' })

export const paraphraseSchema = z
  .object({
    parent: variantCode,
    id: paraphraseId,
    spans: z
      .object({
        /** Replaces "Given a query and a web page … Otherwise, mark it 0." */
        instructions: span.optional(),
        /** Replaces "Split this problem into steps: … without providing any reasoning." (the example stays). */
        steps: span.optional(),
      })
      .strict()
      .refine((s) => s.instructions !== undefined || s.steps !== undefined, {
        message: 'a paraphrase rewrites the instructions span, the steps span or both',
      }),
  })
  .strict()

export type Paraphrase = z.output<typeof paraphraseSchema>

/** `-DNA-/p1`: the parent variant's code, a slash and the paraphrase's id. */
export function paraphraseName(p: Pick<Paraphrase, 'parent' | 'id'>): string {
  return `${codeOf(p.parent)}/${p.id}`
}

/** A prompt's name (`-DNA-` or `-DNA-/p1`) read back; throws an Error with the reason otherwise. */
export function parsePromptName(name: string): { variant: string; paraphrase?: string } {
  const trimmed = name.trim()
  const slash = trimmed.indexOf('/')
  if (slash < 0) return { variant: codeOf(trimmed) }
  const variant = codeOf(trimmed.slice(0, slash))
  const id = paraphraseId.safeParse(trimmed.slice(slash + 1))
  if (!id.success)
    throw new Error(`"${name}" is not a prompt name: ${id.error.issues[0]?.message ?? 'invalid paraphrase id'}`)
  return { variant, paraphrase: id.data }
}
