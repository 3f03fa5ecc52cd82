/**
 * EVINCE (Chang, arXiv 2408.14575 v1, Figure 1) for one case, as a pure protocol.
 *
 * Seats: debaters `A` and `B` (an LLM or a person) and the `moderator` (a program plus a judge LLM
 * for CRIT and the final report). Messages, in order:
 *
 *   round r:  A's turn (top-k distribution + arguments)       A never sees B's round-r answer;
 *             B's turn                                         B sees A's round-r answer (Fig. 1);
 *             CRIT of A's arguments, CRIT of B's arguments     (moderator; skipped when `crit` is off)
 *   then, once the stop rule fires: the moderator's report    (skipped when `report` is off)
 *
 * The decisions below are Parley's where the paper is ambiguous (../shared/reference/evince.md §1.2–1.5);
 * they are binding and shown in the UI:
 * - Contentiousness Δ_r = Δ₀ for r ≤ hold, then Δ₀·decay^(r − hold): 0.9, 0.9, 0.675, 0.506, 0.380 …
 * - CRIT runs once per agent (claim = its distribution, reasons = its arguments, rivals = the other's);
 *   the loop test uses the mean CRIT_r = (Γ_A + Γ_B)/2.
 * - Stop after round r (first reason that applies, in this order):
 *     `wd-rose`    r ≥ 2 and WD_r > WD_{r−1} + τ        (the paper's loop test, with tolerance τ)
 *     `mi-fell`    r ≥ 2 and MI_r < MI_{r−1} − τ
 *     `crit-fell`  r ≥ 2 and CRIT_r < CRIT_{r−1} − τ
 *     `agreement`  WD_r ≤ τ (both agents hold the same distribution)
 *     `plateau`    r ≥ 2 and neither agent's distribution moved more than τ (total variation) since r − 1
 *     `max-rounds` r = maxRounds
 *   A swap of the two lists (the paper's Jaundice round 2) is not a plateau: both distributions moved.
 * - Final P_f = (Ω_A·P_A + Ω_B·P_B)/(Ω_A + Ω_B) over the last round, Ω = the agents' CRIT scores
 *   (equal weights without CRIT or when both are 0); EnToPPS (appendix F) is offered beside it.
 *
 * `apply` refuses (an {@link EvinceMessageError}) a message out of turn, mis-numbered or after the
 * debate, a CRIT score outside [0, 1] (or a reason scored outside 1–10), and a turn whose distribution
 * breaks the rules of {@link turnProblem}: at most k labels, each naming a diagnosis once (and from the
 * label space when the debate has one), probabilities in [0, 1] summing to 1 within
 * {@link EVINCE_SUM_TOLERANCE}. A refused message is never appended: the engine stalls the session.
 */
import { z } from 'zod'
import {
  canonicalLabel,
  combineCrit,
  contentiousness,
  entopps,
  type LabelProb,
  type RoundMetrics,
  roundMetrics,
  align,
  wasserstein01,
} from './metrics'
import { type Ask, type Done, type Protocol, ProtocolError, type SeatDecl } from '../../../lib/protocols/types'

export const EVINCE_PROTOCOL_ID = 'evince'
/** 2: `apply` refuses distributions that break the rules below (`turnProblem`). */
export const EVINCE_PROTOCOL_VERSION = '2'

/**
 * How far a debater's probabilities may sum from 1 (|Σp − 1| ≤ 0.05) for its turn to be accepted.
 * The paper's own Dengue debate (appendix B) has Gemini's round 1 at 95 %, so 5 % is the tightest
 * tolerance that still admits the paper's debates; the metrics renormalise every list and warn when
 * a raw sum is off by more than 2 % (protocols/evince/core/metrics `align`). A one-label list at 200 %, or any
 * list summing to 0, is refused.
 */
export const EVINCE_SUM_TOLERANCE = 0.05

export const evinceConfig = z.strictObject({
  /** Top-k size asked of each debater (the paper: 5; 3 in the Dengue appendix). */
  k: z.number().int().min(1).max(10).default(5),
  maxRounds: z.number().int().min(1).max(20).default(5),
  /** Tolerance τ of the stop rule. */
  tau: z.number().min(0).max(1).default(0.01),
  /** ε of the smoothing for KL and cross-entropy. */
  epsilon: z.number().min(0).max(0.1).default(0.001),
  /** Contentiousness schedule: Δ₀, the factor per round after `hold` rounds. */
  delta: z
    .strictObject({
      initial: z.number().min(0).max(1).default(0.9),
      decay: z.number().min(0).max(1).default(0.75),
      hold: z.number().int().min(0).max(20).default(2),
    })
    .default({ initial: 0.9, decay: 0.75, hold: 2 }),
  /** Judge each agent's arguments with CRIT every round (the loop test and Ω need it). */
  crit: z.boolean().default(true),
  /** The moderator writes a final report (joint conclusion, missing information). */
  report: z.boolean().default(true),
  /** Label aliases (canonical form → canonical form), merged by researchers. */
  aliases: z.record(z.string(), z.string()).default({}),
  /** A closed label space (e.g. the dataset's labels); empty = free labels. */
  labels: z.array(z.string()).default([]),
})
export type EvinceConfig = z.output<typeof evinceConfig>

export const evinceSeat = z.enum(['A', 'B', 'moderator'])
export type EvinceSeat = z.infer<typeof evinceSeat>
export type Debater = 'A' | 'B'

/** One case: the symptoms the debaters see; the ground truth ('' when unknown) is never shown to them. */
export const evinceInstance = z.object({
  input: z.object({ symptoms: z.string() }).passthrough(),
  prediction: z.string().default(''),
  explanation: z.string().default(''),
})
export type EvinceInstance = z.output<typeof evinceInstance>

export const EVINCE_SEATS = [
  { name: 'A', label: 'Debater A', kinds: ['llm', 'human'], description: 'Opens every round.' },
  { name: 'B', label: 'Debater B', kinds: ['llm', 'human'], description: "Answers after seeing A's round." },
  {
    name: 'moderator',
    label: 'Moderator',
    kinds: ['llm', 'program'],
    programs: ['no-judge'],
    description: 'Scores each agent with CRIT and writes the report (a judge LLM); the program gives equal weights.',
  },
] as const satisfies readonly SeatDecl[]

const prediction = z.object({
  label: z.string().trim().min(1).max(200),
  /** A finite number (z.number() refuses NaN and ±Infinity); `turnProblem` holds it to [0, 1] and the sum to 1. */
  probability: z.number(),
  justification: z.string().max(4000).optional(),
})

const turnMessage = z.object({
  seq: z.number().int().min(1),
  kind: z.literal('turn'),
  sender: z.enum(['A', 'B']),
  round: z.number().int().min(1),
  predictions: z.array(prediction).min(1),
  /** Arguments for the agent's own distribution. */
  arguments: z.array(z.string()).default([]),
  /** Arguments against the other agent's latest distribution. */
  counterArguments: z.array(z.string()).default([]),
})

const scoredReason = z.object({
  reason: z.string(),
  validity: z.number().min(1).max(10),
  credibility: z.number().min(1).max(10),
})

const critMessage = z.object({
  seq: z.number().int().min(1),
  kind: z.literal('crit'),
  sender: z.literal('moderator'),
  round: z.number().int().min(1),
  target: z.enum(['A', 'B']),
  /** Γ ∈ [0, 1] (protocols/evince/core/metrics `critScore`). */
  score: z.number().min(0).max(1),
  reasons: z.array(scoredReason).default([]),
  rivals: z.array(scoredReason).default([]),
  comment: z.string().default(''),
})

const reportMessage = z.object({
  seq: z.number().int().min(1),
  kind: z.literal('report'),
  sender: z.literal('moderator'),
  conclusion: z.string(),
  arguments: z.array(z.string()).default([]),
  counterArguments: z.array(z.string()).default([]),
  missingInformation: z.array(z.string()).default([]),
  labTests: z.array(z.string()).default([]),
})

export const evinceMessage = z.discriminatedUnion('kind', [turnMessage, critMessage, reportMessage])
export type EvinceMessage = z.output<typeof evinceMessage>
export type TurnMessage = z.output<typeof turnMessage>
export type CritMessage = z.output<typeof critMessage>
export type ReportMessage = z.output<typeof reportMessage>

export type EvinceStopReason = 'wd-rose' | 'mi-fell' | 'crit-fell' | 'agreement' | 'plateau' | 'max-rounds'
export const STOP_REASONS: Record<EvinceStopReason, string> = {
  'wd-rose': 'Wasserstein distance rose',
  'mi-fell': 'mutual information fell',
  'crit-fell': 'argument quality (CRIT) fell',
  agreement: 'both agents hold the same distribution',
  plateau: 'neither distribution changed',
  'max-rounds': 'maximum number of rounds reached',
}

export interface EvinceRound {
  round: number
  /** Δ used in this round's prompts. */
  delta: number
  A?: TurnMessage
  B?: TurnMessage
  critA?: CritMessage
  critB?: CritMessage
  /** Set once both turns are in. */
  metrics?: RoundMetrics
  /** Mean of the two CRIT scores, once both are in. */
  crit?: number
}

export interface EvinceState<Instance = unknown> {
  readonly config: EvinceConfig
  readonly instance: Instance
  readonly messages: readonly EvinceMessage[]
  readonly rounds: readonly EvinceRound[]
  /** Every stop condition that held after the last complete round (the first is the reason). */
  readonly stopChecks: readonly EvinceStopReason[]
  readonly stop: EvinceStopReason | null
  readonly report: ReportMessage | null
}

/** A debater is asked for its turn; the moderator for CRIT and the report. */
export type EvinceAsk = Ask<EvinceSeat, string, 'turn' | 'crit' | 'report'> &
  (
    | { kind: 'turn'; seat: Debater; round: number; delta: number }
    | { kind: 'crit'; seat: 'moderator'; round: number; target: Debater }
    | { kind: 'report'; seat: 'moderator'; round: number }
  )
export type EvinceDone = Done<EvinceStopReason>

export const ProtocolErrorCodes = [
  'invalid-message',
  'session-over',
  'wrong-seq',
  'out-of-turn',
  'too-many-labels',
  'invalid-distribution',
  'invalid-label',
  'duplicate-label',
  'label-not-in-space',
] as const
export type EvinceErrorCode = (typeof ProtocolErrorCodes)[number]

export class EvinceMessageError extends ProtocolError<EvinceErrorCode> {
  constructor(code: EvinceErrorCode, message: string) {
    super(EVINCE_PROTOCOL_ID, code, message)
    this.name = 'EvinceMessageError'
  }
}

export const deltaFor = (config: EvinceConfig, round: number) => contentiousness(round, config.delta)

/** A turn's problem with the rules: the code `apply` throws and a sentence a model or a person can act on. */
export interface TurnProblem {
  code: Exclude<EvinceErrorCode, 'invalid-message' | 'session-over' | 'wrong-seq' | 'out-of-turn'>
  message: string
}

/** A label names something: at least one letter or digit (an echoed placeholder such as "…" does not). */
const NAMES_SOMETHING = /[\p{L}\p{N}]/u

const percent = (x: number) => `${Number((x * 100).toFixed(1))} %`

/**
 * The rules every debater's distribution obeys, whoever wrote it (an LLM, a person): 1 to k entries;
 * each label non-empty, naming something (a letter or digit), and listed once (compared as the metrics
 * compare labels: canonicalised with the run's aliases); in a closed label space (`config.labels`)
 * every label is in it or is an alias of one of its labels; each probability finite and in [0, 1];
 * and the probabilities sum to 1 within {@link EVINCE_SUM_TOLERANCE}. `apply` throws the problem;
 * the LLM agents re-ask with it (protocols/evince/server/agents.ts), so a reply that breaks a
 * rule never becomes a turn. Null when the list obeys them all.
 */
export function turnProblem(
  config: Pick<EvinceConfig, 'k' | 'labels' | 'aliases'>,
  predictions: ReadonlyArray<{ label: unknown; probability: unknown }>,
): TurnProblem | null {
  if (!predictions.length) return { code: 'invalid-distribution', message: 'the list names no diagnosis' }
  if (predictions.length > config.k)
    return {
      code: 'too-many-labels',
      message: `${predictions.length} labels are listed; the debate asks for at most k = ${config.k}`,
    }
  const seen = new Map<string, string>()
  const space = config.labels.length ? new Set(config.labels.map((l) => canonicalLabel(l, config.aliases))) : null
  let sum = 0
  for (const p of predictions) {
    const label = typeof p.label === 'string' ? p.label.trim() : ''
    if (!label || !NAMES_SOMETHING.test(label))
      return { code: 'invalid-label', message: `${JSON.stringify(p.label)} is not a diagnosis (a label is a name)` }
    const c = canonicalLabel(label, config.aliases)
    if (!c || !NAMES_SOMETHING.test(c))
      return { code: 'invalid-label', message: `"${label}" names no diagnosis once parentheticals are removed` }
    const had = seen.get(c)
    if (had !== undefined)
      return {
        code: 'duplicate-label',
        message: `"${label}" is listed twice (also as "${had}"); list each diagnosis once`,
      }
    seen.set(c, label)
    if (space && !space.has(c))
      return {
        code: 'label-not-in-space',
        message: `"${label}" is not in this debate's label space (${config.labels.join('; ')})`,
      }
    const x = p.probability
    if (typeof x !== 'number' || !Number.isFinite(x))
      return { code: 'invalid-distribution', message: `the probability of "${label}" is not a number` }
    sum += x
  }
  // A few ulps of slack, so a list that sums to 0.95 in decimal is not refused for its binary rounding.
  if (Math.abs(sum - 1) > EVINCE_SUM_TOLERANCE + 1e-9)
    return {
      code: 'invalid-distribution',
      message: `the probabilities sum to ${percent(sum)}; they must sum to 100 % (within ${percent(EVINCE_SUM_TOLERANCE)})`,
    }
  const out = predictions.find((p) => (p.probability as number) < 0 || (p.probability as number) > 1)
  if (out)
    return {
      code: 'invalid-distribution',
      message: `the probability of "${String(out.label).trim()}" is ${String(out.probability)}; each probability is a number from 0 to 1`,
    }
  return null
}

function init<Instance>(config: EvinceConfig, instance: Instance): EvinceState<Instance> {
  return { config, instance, messages: [], rounds: [], stopChecks: [], stop: null, report: null }
}

/** Is round r complete (both turns and, with CRIT, both scores)? */
function complete(config: EvinceConfig, r: EvinceRound | undefined): boolean {
  return !!r?.A && !!r.B && (!config.crit || (!!r.critA && !!r.critB))
}

/** The stop conditions that hold after the last round of `rounds` (all complete). */
/** How far one agent's distribution moved between two rounds: total variation on the aligned labels. */
export function moved(a: LabelProb[], b: LabelProb[], aliases: Record<string, string>): number {
  const x = align(a, b, { aliases })
  return wasserstein01(x.p, x.q)
}

export function stopChecks(config: EvinceConfig, rounds: readonly EvinceRound[]): EvinceStopReason[] {
  const cur = rounds.at(-1)
  if (!cur?.metrics || !cur.A || !cur.B) return []
  const prev = rounds.at(-2)
  const τ = config.tau
  const out: EvinceStopReason[] = []
  if (prev?.metrics && prev.A && prev.B) {
    if (cur.metrics.wd > prev.metrics.wd + τ) out.push('wd-rose')
    if (cur.metrics.mi < prev.metrics.mi - τ) out.push('mi-fell')
    if (config.crit && cur.crit !== undefined && prev.crit !== undefined && cur.crit < prev.crit - τ)
      out.push('crit-fell')
  }
  if (cur.metrics.wd <= τ) out.push('agreement')
  if (prev?.A && prev.B) {
    const movedA = moved(cur.A.predictions, prev.A.predictions, config.aliases)
    const movedB = moved(cur.B.predictions, prev.B.predictions, config.aliases)
    if (movedA <= τ && movedB <= τ) out.push('plateau')
  }
  if (cur.round >= config.maxRounds) out.push('max-rounds')
  return out
}

function next(state: EvinceState): EvinceAsk | EvinceDone {
  const { config, rounds } = state
  const j = state.messages.length + 1
  if (state.stop) {
    if (config.report && !state.report)
      return { done: false, seat: 'moderator', j, kind: 'report', round: rounds.length }
    return { done: true, reason: state.stop }
  }
  const cur = rounds.at(-1)
  if (!cur || complete(config, cur)) {
    const round = (cur?.round ?? 0) + 1
    return { done: false, seat: 'A', j, kind: 'turn', round, delta: deltaFor(config, round) }
  }
  if (!cur.A) return { done: false, seat: 'A', j, kind: 'turn', round: cur.round, delta: cur.delta }
  if (!cur.B) return { done: false, seat: 'B', j, kind: 'turn', round: cur.round, delta: cur.delta }
  if (!cur.critA) return { done: false, seat: 'moderator', j, kind: 'crit', round: cur.round, target: 'A' }
  return { done: false, seat: 'moderator', j, kind: 'crit', round: cur.round, target: 'B' }
}

function apply<Instance>(state: EvinceState<Instance>, raw: EvinceMessage): EvinceState<Instance> {
  const parsed = evinceMessage.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : ''
    throw new EvinceMessageError('invalid-message', `Message ${raw?.seq}: ${where}${issue?.message}`)
  }
  const msg = parsed.data
  const ask = next(state)
  if (ask.done) throw new EvinceMessageError('session-over', `The debate is over (${ask.reason}).`)
  if (msg.seq !== ask.j) throw new EvinceMessageError('wrong-seq', `Expected message ${ask.j}, got ${msg.seq}.`)
  const expected =
    ask.kind === 'turn'
      ? `${ask.seat}'s turn in round ${ask.round}`
      : ask.kind === 'crit'
        ? `CRIT of ${ask.target}`
        : 'the report'
  const fits =
    msg.kind === ask.kind &&
    msg.sender === ask.seat &&
    (msg.kind === 'report' || msg.round === ask.round) &&
    (msg.kind !== 'crit' || (ask.kind === 'crit' && msg.target === ask.target))
  if (!fits) throw new EvinceMessageError('out-of-turn', `Message ${msg.seq} should be ${expected}.`)
  const config = state.config
  const messages = [...state.messages, msg]
  if (msg.kind === 'report') return { ...state, messages, report: msg }
  if (msg.kind === 'turn') {
    const problem = turnProblem(config, msg.predictions)
    if (problem) throw new EvinceMessageError(problem.code, `Message ${msg.seq} (${msg.sender}): ${problem.message}.`)
  }
  const rounds = [...state.rounds]
  // A's turn always opens a round; every other message completes the latest one.
  let cur: EvinceRound
  if (ask.kind === 'turn' && ask.seat === 'A') {
    cur = { round: ask.round, delta: ask.delta }
    rounds.push(cur)
  } else cur = { ...(rounds.at(-1) as EvinceRound) }
  if (msg.kind === 'turn') {
    cur = { ...cur, [msg.sender]: msg }
    if (cur.A && cur.B)
      try {
        cur.metrics = roundMetrics(cur.A.predictions, cur.B.predictions, {
          epsilon: config.epsilon,
          aliases: config.aliases,
        })
      } catch (err) {
        throw new EvinceMessageError('invalid-message', `Message ${msg.seq}: ${(err as Error).message}`)
      }
  } else {
    cur = { ...cur, [msg.target === 'A' ? 'critA' : 'critB']: msg }
    if (cur.critA && cur.critB) cur.crit = (cur.critA.score + cur.critB.score) / 2
  }
  rounds[rounds.length - 1] = cur
  if (!complete(config, cur)) return { ...state, messages, rounds }
  const checks = stopChecks(config, rounds)
  return { ...state, messages, rounds, stopChecks: checks, stop: checks[0] ?? null }
}

export const evince: Protocol<EvinceConfig, EvinceState, EvinceMessage, EvinceInstance, EvinceAsk, EvinceDone> & {
  init: typeof init
  apply: typeof apply
} = {
  id: EVINCE_PROTOCOL_ID,
  version: EVINCE_PROTOCOL_VERSION,
  label: 'EVINCE debate',
  config: evinceConfig,
  message: evinceMessage,
  instance: evinceInstance,
  seats: EVINCE_SEATS,
  init,
  next,
  apply,
}

/** The last round with both turns (the one the final distribution combines). */
export function lastFullRound(state: Pick<EvinceState, 'rounds'>): EvinceRound | undefined {
  return [...state.rounds].reverse().find((r) => r.A && r.B)
}

/**
 * The final distribution: CRIT-weighted P_f = (Ω_A·P_A + Ω_B·P_B)/(Ω_A + Ω_B) over the last full
 * round (equal weights without CRIT scores), and EnToPPS beside it. Null before round 1 is complete.
 */
export function finalDistribution(state: Pick<EvinceState, 'rounds' | 'config'>) {
  const r = lastFullRound(state)
  if (!r?.A || !r.B) return null
  const omegaA = r.critA?.score ?? 1
  const omegaB = r.critB?.score ?? 1
  const opts = { aliases: state.config.aliases }
  return {
    round: r.round,
    omegaA,
    omegaB,
    crit: combineCrit(r.A.predictions, r.B.predictions, omegaA, omegaB, opts) as LabelProb[],
    entopps: entopps(r.A.predictions, r.B.predictions, opts) as LabelProb[],
  }
}
