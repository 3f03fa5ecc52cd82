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
 */
import { z } from 'zod'
import {
  combineCrit,
  contentiousness,
  entopps,
  type LabelProb,
  type RoundMetrics,
  roundMetrics,
  align,
  wasserstein01,
} from '../../metrics/evince'
import { type Ask, type Done, type Protocol, ProtocolError, type SeatDecl } from '../types'

export const EVINCE_PROTOCOL_ID = 'evince'
export const EVINCE_PROTOCOL_VERSION = '1'

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
  probability: z.number().finite().min(0),
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
  /** Γ ∈ [0, 1] (lib/metrics/evince `critScore`). */
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

export type EvinceAsk = Ask<EvinceSeat, string, 'turn' | 'crit' | 'report'> &
  (
    | { kind: 'turn'; round: number; delta: number }
    | { kind: 'crit'; round: number; target: Debater }
    | { kind: 'report'; round: number }
  )
export type EvinceDone = Done<EvinceStopReason>

export const ProtocolErrorCodes = [
  'invalid-message',
  'session-over',
  'wrong-seq',
  'out-of-turn',
  'too-many-labels',
] as const
export type EvinceErrorCode = (typeof ProtocolErrorCodes)[number]

export class EvinceMessageError extends ProtocolError<EvinceErrorCode> {
  constructor(code: EvinceErrorCode, message: string) {
    super(EVINCE_PROTOCOL_ID, code, message)
    this.name = 'EvinceMessageError'
  }
}

export const deltaFor = (config: EvinceConfig, round: number) => contentiousness(round, config.delta)

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
  if (!parsed.success)
    throw new EvinceMessageError('invalid-message', `Message ${raw?.seq}: ${parsed.error.issues[0]?.message}`)
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
  if (msg.kind === 'turn' && msg.predictions.length > config.k)
    throw new EvinceMessageError(
      'too-many-labels',
      `${msg.sender} listed ${msg.predictions.length} labels; the debate asks for at most k = ${config.k}.`,
    )
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

export const evince: Protocol<EvinceConfig, EvinceState, EvinceMessage, unknown, EvinceAsk, EvinceDone> & {
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
