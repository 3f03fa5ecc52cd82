/**
 * PXP INTERACT (paper Procedure 1) for one session, i.e. one data instance, as a pure protocol.
 *
 * - Message numbers j start at 1; the machine (m) writes odd j, the human (h) even j.
 * - l_m, l_h are each agent's latest tag, both INIT before the first message.
 * - After the machine's message: Stop = (l_m = RATIFY ∧ l_h = RATIFY) ∨ l_m = REJECT.
 *   After the human's message:   Stop = (l_m = RATIFY ∧ l_h = RATIFY) ∨ l_h = REJECT.
 * - Done = j > n ∨ Stop, with j the number of the next message; so a session has at most n messages.
 * - The tag of message 1 is INIT (Procedure 2), INIT appears nowhere else, and REJECT only when j > k.
 *
 * Stop reasons: `mutual-ratify`, `machine-reject`, `human-reject`, and `bound` (j > n with no Stop).
 * When the n-th message also triggers Stop, the Stop reason is recorded: it says more.
 *
 * The protocol does not recompute tags: MATCH and AGREE belong to the agents (./agent.ts derives a
 * tag for an LLM or a proxy; an expert picks one from `allowedTags`). It enforces what every
 * message must satisfy and refuses the rest with a {@link PxpMessageError}: the message number and
 * sender, a tag the rules allow at j (INIT exactly at j = 1, REJECT only when j > k), and a
 * prediction y that shows something ({@link answerProblem}); the explanation e may be empty, since
 * a dataset's ground truth (the proxy's answer) may have none.
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError, type SeatDecl } from '../../../lib/protocols/types'
import { legalTags } from './agent'
import { type PxpSeat, type PxpTag, pxpSeat, pxpTag, seatForMessage } from './tags'

export const PXP_PROTOCOL_ID = 'pxp'
/** 2: `apply` refuses a prediction that shows nothing (`answerProblem`). */
export const PXP_PROTOCOL_VERSION = '2'

export const pxpConfig = z.strictObject({
  /** Upper bound on the number of messages in a session (paper: 10, i.e. 5 cycles). */
  n: z.number().int().min(1).default(10),
  /** REJECT may be sent only at message numbers j > k (k ≥ 1; the authors' code uses 3). */
  k: z.number().int().min(1).default(3),
})
export type PxpConfig = z.output<typeof pxpConfig>

/** μ = (l, y, e) from `sender` as message number `seq`; the receiver is the other seat. */
export const pxpMessage = z.object({
  seq: z.number().int().min(1),
  sender: pxpSeat,
  tag: pxpTag,
  /** y: the prediction (a label, a SMILES string …), as the task serialises it. */
  prediction: z.string(),
  /** e: the explanation. */
  explanation: z.string(),
})
export type PxpMessage = z.output<typeof pxpMessage>

/**
 * D's instance: x (the input shown to the agents), y and e (the ground truth). For RAD the image is
 * named in `input.image` and read from the dataset's assets (`datasetId`), or given as `imageUrl`.
 */
export const pxpInstance = z.object({
  input: z.record(z.string(), z.unknown()),
  prediction: z.string(),
  explanation: z.string(),
  imageUrl: z.string().optional(),
  datasetId: z.string().optional(),
})
export type PxpInstance = z.output<typeof pxpInstance>

/** The two seats: the machine m writes odd messages, the human h (the tester) even ones. */
export const PXP_SEAT_DECLS = [
  {
    name: 'm',
    label: 'Machine',
    kinds: ['llm', 'human'],
    helpers: [{ name: 'checker', label: 'AGREE checker (temperature 0)', required: true, for: ['llm'] }],
    description: 'Writes odd messages: INIT, then its tagged revisions.',
  },
  {
    name: 'h',
    label: 'Tester',
    kinds: ['proxy', 'human', 'llm'],
    helpers: [{ name: 'checker', label: 'AGREE checker (temperature 0)', required: true, for: ['proxy', 'llm'] }],
    description: "Writes even messages; the proxy answers the dataset's ground truth.",
  },
] as const satisfies readonly SeatDecl[]

export type PxpStopReason = 'mutual-ratify' | 'machine-reject' | 'human-reject' | 'bound'

export type PxpAsk = Ask<PxpSeat, PxpTag, 'turn'>
export type PxpDone = Done<PxpStopReason>

export interface PxpState<Instance = PxpInstance> {
  readonly config: PxpConfig
  readonly instance: Instance
  readonly messages: readonly PxpMessage[]
  /** The number of the next message. */
  readonly j: number
  /** l_m and l_h: each agent's latest tag (INIT before it has spoken). */
  readonly latest: Readonly<Record<PxpSeat, PxpTag>>
  /** Set by the message that made Stop true; null while the Stop rule has not fired. */
  readonly stop: Exclude<PxpStopReason, 'bound'> | null
}

export type PxpErrorCode =
  | 'invalid-config'
  | 'invalid-message'
  | 'session-over'
  | 'wrong-seq'
  | 'wrong-sender'
  | 'init-required'
  | 'init-not-first'
  | 'reject-too-early'
  | 'invalid-answer'

export class PxpMessageError extends ProtocolError<PxpErrorCode> {
  constructor(code: PxpErrorCode, message: string) {
    super(PXP_PROTOCOL_ID, code, message)
    this.name = 'PxpMessageError'
  }
}

/** A character that shows: not white space, and not an invisible format character (U+200B, U+FEFF …). */
const VISIBLE = /[^\p{White_Space}\p{Cf}]/u

/**
 * What is wrong with μ's answer (y, e), or null: y must show something, in any task (a label, SMILES,
 * a generic template's text); e is any text. `apply` refuses such a message, and an LLM seat's reply
 * is re-asked with the same sentence (protocols/pxp/server/agents.ts).
 */
export function answerProblem(prediction: unknown, explanation: unknown): string | null {
  if (typeof prediction !== 'string' || !VISIBLE.test(prediction))
    return 'The prediction is empty: it shows no character.'
  if (typeof explanation !== 'string') return 'The explanation is not text.'
  return null
}

function init<Instance>(config: PxpConfig, instance: Instance): PxpState<Instance> {
  const parsed = pxpConfig.safeParse(config)
  if (!parsed.success)
    throw new PxpMessageError('invalid-config', `Invalid PXP config: ${z.prettifyError(parsed.error)}`)
  return { config: parsed.data, instance, messages: [], j: 1, latest: { m: 'INIT', h: 'INIT' }, stop: null }
}

function next(state: PxpState<unknown>): PxpAsk | PxpDone {
  if (state.stop) return { done: true, reason: state.stop }
  if (state.j > state.config.n) return { done: true, reason: 'bound' }
  return {
    done: false,
    seat: seatForMessage(state.j),
    j: state.j,
    kind: 'turn',
    allowedTags: legalTags(state.j, state.config.k),
  }
}

function apply<Instance>(state: PxpState<Instance>, raw: PxpMessage): PxpState<Instance> {
  const parsed = pxpMessage.safeParse(raw)
  if (!parsed.success)
    throw new PxpMessageError('invalid-message', `Invalid PXP message: ${z.prettifyError(parsed.error)}`)
  const msg = parsed.data
  const ask = next(state)
  if (ask.done)
    throw new PxpMessageError('session-over', `The session is over (${ask.reason}); no message is accepted.`)
  const { j } = ask
  const { k } = state.config
  if (msg.seq !== j) throw new PxpMessageError('wrong-seq', `Expected message number ${j}, got ${msg.seq}.`)
  if (msg.sender !== ask.seat)
    throw new PxpMessageError(
      'wrong-sender',
      `Message ${j} is the ${seatName(ask.seat)}'s turn, not the ${seatName(msg.sender)}'s.`,
    )
  if (j === 1 && msg.tag !== 'INIT')
    throw new PxpMessageError('init-required', `Message 1 is tagged INIT (Procedure 2), not ${msg.tag}.`)
  if (msg.tag === 'INIT' && j !== 1)
    throw new PxpMessageError('init-not-first', `INIT is the tag of message 1 only; message ${j} cannot use it.`)
  if (msg.tag === 'REJECT' && j <= k)
    throw new PxpMessageError('reject-too-early', `REJECT is allowed only after message ${k} (this is message ${j}).`)
  const problem = answerProblem(msg.prediction, msg.explanation)
  if (problem) throw new PxpMessageError('invalid-answer', `Message ${j}: ${problem}`)

  const latest = { ...state.latest, [msg.sender]: msg.tag }
  let stop: PxpState['stop'] = null
  if (latest.m === 'RATIFY' && latest.h === 'RATIFY') stop = 'mutual-ratify'
  else if (msg.tag === 'REJECT') stop = msg.sender === 'm' ? 'machine-reject' : 'human-reject'
  return { ...state, messages: [...state.messages, msg], j: j + 1, latest, stop }
}

function seatName(seat: PxpSeat) {
  return seat === 'm' ? 'machine' : 'human'
}

export const pxp: Protocol<PxpConfig, PxpState<PxpInstance>, PxpMessage, PxpInstance, PxpAsk, PxpDone> = {
  id: PXP_PROTOCOL_ID,
  version: PXP_PROTOCOL_VERSION,
  label: 'PXP / INTERACT',
  config: pxpConfig,
  message: pxpMessage,
  instance: pxpInstance,
  seats: PXP_SEAT_DECLS,
  init,
  next,
  apply,
}
