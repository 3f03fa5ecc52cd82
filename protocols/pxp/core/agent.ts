/**
 * PXP's AGENT procedure (paper Procedure 2): how agent λ tags its message number j.
 *
 * 1. (y, e) := λ's new answer (ASK_AGENT; not here: the runner asks the LLM, the proxy or the person).
 * 2. j = 1: l := INIT.
 * 3. j ≥ 2: (y', e') := the partner's message j−1; (y'', e'') := λ's own message j−2, except at j = 2
 *    where (y'', e'') := (y, e).
 *      A = MATCH_λ(y', y'') ∧ AGREE_λ(e', e'')      B = MATCH_λ(y', y'') ∧ ¬AGREE_λ(e', e'')
 *      C = ¬MATCH_λ(y', y'') ∧ AGREE_λ(e', e'')     D = ¬MATCH_λ(y', y'') ∧ ¬AGREE_λ(e', e'')
 *      Changed = ¬MATCH_λ(y, y'') ∨ ¬AGREE_λ(e, e'')
 *      A → RATIFY;  B or C → REVISE if Changed else REFUTE;
 *      D → REJECT if j > k, else REVISE if Changed, else REFUTE.
 *
 * The category judges λ's previous answer against the partner's latest one; the new answer only
 * decides Changed. At j = 2 a deterministic AGREE makes Changed false, so the human's first tag is
 * RATIFY or REFUTE (or REJECT when k = 1). Arguments are passed in the paper's order
 * (partner's or new answer first, own previous answer second).
 */
import { type PxpTag, pxpTag } from './tags'

export type Category = 'A' | 'B' | 'C' | 'D'

function checkMessageNumber(j: number, k: number) {
  if (!Number.isInteger(j) || j < 1) throw new RangeError(`j must be an integer ≥ 1 (got ${j})`)
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be an integer ≥ 1 (got ${k})`)
}

/**
 * The category of λ's previous answer given MATCH_λ(y', y'') and AGREE_λ(e', e''):
 * A = match ∧ agree, B = match ∧ ¬agree, C = ¬match ∧ agree, D = ¬match ∧ ¬agree.
 */
export function category(matchPrev: boolean, agreePrev: boolean): Category {
  if (matchPrev) return agreePrev ? 'A' : 'B'
  return agreePrev ? 'C' : 'D'
}

/** Changed = ¬MATCH_λ(y, y'') ∨ ¬AGREE_λ(e, e''): the new answer differs from λ's previous one. */
export function changed(matchOwn: boolean, agreeOwn: boolean): boolean {
  return !matchOwn || !agreeOwn
}

/** Does the tag for (j, k, category) depend on Changed? (B, C, and D while REJECT is not yet allowed.) */
export function needsChanged(j: number, k: number, cat: Category): boolean {
  return cat === 'B' || cat === 'C' || (cat === 'D' && j <= k)
}

export interface DeriveTagInput {
  /** The message number being tagged (≥ 1). */
  j: number
  /** REJECT is allowed only when j > k (k ≥ 1). */
  k: number
  /** Required when j ≥ 2. */
  category?: Category
  /** Required when the category needs it (see {@link needsChanged}); otherwise not read. */
  changed?: boolean
}

/** Procedure 2's tag table (steps 2–3). */
export function deriveTag({ j, k, category: cat, changed: chg }: DeriveTagInput): PxpTag {
  checkMessageNumber(j, k)
  if (j === 1) return 'INIT'
  if (cat === undefined) throw new RangeError(`the category is needed to tag message ${j}`)
  if (cat === 'A') return 'RATIFY'
  if (cat === 'D' && j > k) return 'REJECT'
  if (chg === undefined) throw new RangeError(`Changed is needed to tag message ${j} in category ${cat}`)
  return chg ? 'REVISE' : 'REFUTE'
}

export interface Answer<Y = string, E = string> {
  /** The prediction. */
  y: Y
  /** The explanation. */
  e: E
}

export interface AgentTagInput<Y = string, E = string> {
  j: number
  k: number
  /** λ's new answer (y, e). */
  own: Answer<Y, E>
  /**
   * λ's own message j−2 (y'', e''); needed when j ≥ 3. At j = 2 Procedure 2 sets (y'', e'') := (y, e),
   * the new answer, so this field is not read.
   */
  ownPrev?: Answer<Y, E>
  /** The partner's message j−1 (y', e'); needed when j ≥ 2. */
  partnerPrev?: Answer<Y, E>
  /** MATCH_λ(a, b) for predictions. */
  match: (a: Y, b: Y) => boolean
  /** AGREE_λ(a, b) for explanations. */
  agree: (a: E, b: E) => boolean
}

export interface AgentTagResult {
  tag: PxpTag
  /** null at j = 1 (no comparison is made). */
  category: Category | null
  /** null when the tag did not depend on it (j = 1, category A, or D with j > k): it was not evaluated. */
  changed: boolean | null
}

/**
 * Procedure 2 with MATCH_λ and AGREE_λ plugged in. Changed is evaluated only when the tag depends
 * on it, and with `||` short-circuiting (AGREE is not asked when MATCH already fails), so an
 * expensive judge (an LLM) is not called for nothing.
 */
export function agentTag<Y, E>(input: AgentTagInput<Y, E>): AgentTagResult {
  const steps = tagSteps(input)
  let step = steps.next()
  while (!step.done) {
    const q = step.value
    step = steps.next(q.judge === 'match' ? input.match(q.a, q.b) : input.agree(q.a, q.b))
  }
  return step.value
}

/** A question Procedure 2 puts to a judge: MATCH on predictions or AGREE on explanations. */
type JudgeQuestion<Y, E> = { judge: 'match'; a: Y; b: Y } | { judge: 'agree'; a: E; b: E }

/**
 * Procedure 2 written once, as a generator that yields each judge question and receives the answer;
 * {@link agentTag} answers synchronously, {@link agentTagAsync} awaits. The order and laziness of
 * the questions are therefore the same for both.
 */
function* tagSteps<Y, E>(
  input: Omit<AgentTagInput<Y, E>, 'match' | 'agree'>,
): Generator<JudgeQuestion<Y, E>, AgentTagResult, boolean> {
  const { j, k, own } = input
  checkMessageNumber(j, k)
  if (j === 1) return { tag: 'INIT', category: null, changed: null }
  const partner = input.partnerPrev
  if (!partner) throw new RangeError(`the partner's message ${j - 1} is needed to tag message ${j}`)
  let prev: Answer<Y, E>
  if (j === 2) prev = own
  else if (input.ownPrev) prev = input.ownPrev
  else throw new RangeError(`the agent's own message ${j - 2} is needed to tag message ${j}`)

  const matchPrev = yield { judge: 'match', a: partner.y, b: prev.y }
  const agreePrev = yield { judge: 'agree', a: partner.e, b: prev.e }
  const cat = category(matchPrev, agreePrev)
  if (!needsChanged(j, k, cat)) return { tag: deriveTag({ j, k, category: cat }), category: cat, changed: null }
  const chg = !(yield { judge: 'match', a: own.y, b: prev.y }) || !(yield { judge: 'agree', a: own.e, b: prev.e })
  return { tag: deriveTag({ j, k, category: cat, changed: chg }), category: cat, changed: chg }
}

/** Tags the rules allow at message j: INIT only at j = 1 (and nothing else there); REJECT only when j > k. */
export function legalTags(j: number, k: number): PxpTag[] {
  checkMessageNumber(j, k)
  if (j === 1) return ['INIT']
  return j > k ? ['RATIFY', 'REFUTE', 'REVISE', 'REJECT'] : ['RATIFY', 'REFUTE', 'REVISE']
}

export function isTagAllowed(tag: PxpTag, j: number, k: number): boolean {
  return legalTags(j, k).includes(tag)
}

/**
 * The tags to offer an expert writing message j: the derived tag first (the one Procedure 2 gives
 * for their MATCH/AGREE judgement), then the other tags the rules allow, in the order
 * RATIFY, REFUTE, REVISE, REJECT. Without a derived tag, just the legal tags.
 * A derived tag the rules refuse at j is a caller bug and throws.
 */
export function allowedTags(j: number, k: number, derived?: PxpTag): PxpTag[] {
  const legal = legalTags(j, k)
  if (derived === undefined) return legal
  pxpTag.parse(derived)
  if (!legal.includes(derived)) throw new RangeError(`${derived} is not allowed at message ${j} (k = ${k})`)
  return [derived, ...legal.filter((t) => t !== derived)]
}

export interface AgentTagAsyncInput<Y = string, E = string> extends Omit<AgentTagInput<Y, E>, 'match' | 'agree'> {
  /** MATCH_λ; may be asynchronous (e.g. RDKit loading). */
  match: (a: Y, b: Y) => boolean | Promise<boolean>
  /** AGREE_λ; usually asynchronous (a checker LLM). */
  agree: (a: E, b: E) => boolean | Promise<boolean>
}

/**
 * {@link agentTag} for judges that answer asynchronously (an LLM checker for AGREE). Same rules,
 * same laziness: AGREE is not asked when MATCH already decides Changed, and Changed is not
 * evaluated when the tag does not depend on it, so no judge call is wasted.
 */
export async function agentTagAsync<Y, E>(input: AgentTagAsyncInput<Y, E>): Promise<AgentTagResult> {
  const steps = tagSteps(input)
  let step = steps.next()
  while (!step.done) {
    const q = step.value
    step = steps.next(await (q.judge === 'match' ? input.match(q.a, q.b) : input.agree(q.a, q.b)))
  }
  return step.value
}
