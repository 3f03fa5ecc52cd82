/**
 * The generic shape every Parley protocol has (see docs/ARCHITECTURE.md, "Protocols are pure").
 *
 * A protocol is pure: no database, no network, no React. The engine derives a session's state by
 * replaying its append-only message log,
 *
 *   state = messages.reduce(protocol.apply, protocol.init(config, instance))
 *
 * then asks `next(state)` whose turn it is (an {@link Ask}) or how the session ended (a {@link Done}).
 * The protocol also declares its seats (who may fill each: a person, an LLM, a proxy over a
 * dataset's ground truth, or a program), the instance it runs on, and the kinds of asks it makes,
 * so one engine can run every protocol without naming any of them.
 */
import type { z } from 'zod'
import { crossCopy } from '../cross-copy'

/** Who can fill a seat: a person in the browser, an LLM, a proxy over ground truth, or a program. */
export const AGENT_KINDS = ['human', 'llm', 'proxy', 'program'] as const
export type AgentKind = (typeof AGENT_KINDS)[number]

/** A named LLM a seat's agent uses besides its main model (PXP's AGREE checker …). */
export interface HelperDecl {
  name: string
  label: string
  /** Must be given when the seat is filled by an agent that uses it. */
  required: boolean
  /** Which agent kinds of the seat use the helper (all non-human kinds when absent). */
  for?: readonly Exclude<AgentKind, 'human'>[]
}

/** A seat of the protocol, and which agent kinds may fill it. */
export interface SeatDecl<Seat extends string = string> {
  name: Seat
  label: string
  kinds: readonly AgentKind[]
  /** Programs that may fill the seat (for kind `program`), by name. */
  programs?: readonly string[]
  helpers?: readonly HelperDecl[]
  description?: string
}

/** What the protocol asks of one seat: write message number `j`, of kind `kind`. */
export interface Ask<Seat extends string = string, Tag extends string = string, Kind extends string = string> {
  done: false
  /** The seat whose turn it is. */
  seat: Seat
  /** The message number (the log's `seq`) the seat is asked to write; the first message is 1. */
  j: number
  /**
   * What is asked ("turn", "crit", "probe" …): the engine hands it to the seat's agent, and the UI
   * picks the form a person sees by it. Protocols with one kind of message may leave it out.
   */
  kind?: Kind
  /** The tags the seat may attach, when the protocol has tags; the runner and the UI offer only these. */
  allowedTags?: readonly Tag[]
}

/** The session is over; `reason` says why (a protocol-specific code). */
export interface Done<Reason extends string = string> {
  done: true
  reason: Reason
}

/** Every message names its number and its sender seat; the rest is the protocol's. */
export interface BaseMessage {
  seq: number
  sender: string
}

export interface Protocol<
  Config,
  State,
  Message extends BaseMessage,
  Instance = unknown,
  A extends Ask<string, string, string> = Ask,
  D extends Done<string> = Done,
> {
  /** Stable identifier, e.g. "pxp". */
  id: string
  /** Bumped when the rules change, so a stored session can say which rules it ran under. */
  version: string
  /** A human-readable name ("PXP / INTERACT"). */
  label: string
  /** Validated parameters (n, k, rounds, budget, λ …); `parse` fills the defaults. */
  config: z.ZodType<Config, any>
  /** What a seat may say. */
  message: z.ZodType<Message, any>
  /** What one session runs on (a data instance, a case, a game instance …). */
  instance: z.ZodType<Instance, any>
  /** The seats, in the order the UI lists them. */
  seats: readonly SeatDecl[]
  init(config: Config, instance: Instance): State
  /** Whose turn it is and what is asked of that seat, or the outcome. */
  next(state: State): A | D
  /** The state after one more message; throws a {@link ProtocolError} for a message the rules refuse. */
  apply(state: State, msg: Message): State
}

/** Any protocol (for registries and the engine, which never look inside). */
export type AnyProtocol = Protocol<any, any, any, any, Ask<string, string, string>, Done<string>>

/**
 * A message the protocol refuses. `code` is machine-readable (each protocol lists its codes);
 * the message says what happened in words a researcher can act on.
 */
export class ProtocolError<Code extends string = string> extends Error {
  constructor(
    readonly protocol: string,
    readonly code: Code,
    message: string,
  ) {
    super(message)
    this.name = 'ProtocolError'
  }
}
crossCopy(ProtocolError, 'ProtocolError')

export function isDone<A extends Ask<string, string, string>, D extends Done<string>>(r: A | D): r is D {
  return r.done
}

/** Folds a message log into the state: the one way state is ever derived. */
export function replay<Config, State, Message, Instance>(
  protocol: { init(config: Config, instance: Instance): State; apply(state: State, msg: Message): State },
  config: Config,
  instance: Instance,
  messages: Iterable<Message>,
): State {
  let state = protocol.init(config, instance)
  for (const m of messages) state = protocol.apply(state, m)
  return state
}

/** The first stored message the rules refuse: its number and the protocol's error. */
export interface RefusedMessage {
  seq: number
  code: string
  message: string
}

/**
 * {@link replay} for reading stored logs in results and exports: the state of the longest prefix the
 * rules accept, and the first message they refuse (null when they accept the whole log). A log
 * written before a rule existed may hold a message the current `apply` refuses; a reader that
 * counts results excludes such a log and says why, rather than failing or counting it. Any error
 * that is not a {@link ProtocolError} is thrown.
 */
export function replayAccepted<Config, State, Message extends BaseMessage, Instance>(
  protocol: { init(config: Config, instance: Instance): State; apply(state: State, msg: Message): State },
  config: Config,
  instance: Instance,
  messages: Iterable<Message>,
): { state: State; refused: RefusedMessage | null } {
  let state = protocol.init(config, instance)
  for (const m of messages) {
    try {
      state = protocol.apply(state, m)
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err
      return { state, refused: { seq: m.seq, code: err.code, message: err.message } }
    }
  }
  return { state, refused: null }
}

/** A refused stored message in words: "Message 3 …" (the protocol's own sentence, numbered once). */
export function describeRefused(r: RefusedMessage): string {
  return /^message \d+\b/i.test(r.message) ? r.message : `Message ${r.seq}: ${r.message}`
}
