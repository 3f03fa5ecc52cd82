/**
 * The generic shape every Parley protocol has (see docs/ARCHITECTURE.md, "Protocols are pure").
 *
 * A protocol is pure: no database, no network, no React. The runner derives a session's state by
 * replaying its append-only message log,
 *
 *   state = messages.reduce(protocol.apply, protocol.init(config, instance))
 *
 * then asks `next(state)` whose turn it is (an {@link Ask}) or how the session ended (a {@link Done}).
 * PXP is the first protocol; EVINCE debates and ReHAC collaboration reuse the same interface.
 */
import type { z } from 'zod'

/** What the protocol asks of one seat: write message number `j`. */
export interface Ask<Seat extends string = string, Tag extends string = string> {
  done: false
  /** The seat whose turn it is. */
  seat: Seat
  /** The message number (the log's `seq`) the seat is asked to write; the first message is 1. */
  j: number
  /** The tags the seat may attach, when the protocol has tags; the runner and the UI offer only these. */
  allowedTags?: readonly Tag[]
}

/** The session is over; `reason` says why (a protocol-specific code). */
export interface Done<Reason extends string = string> {
  done: true
  reason: Reason
}

export interface Protocol<
  Config,
  State,
  Message,
  Instance = unknown,
  A extends Ask<string, string> = Ask,
  D extends Done<string> = Done,
> {
  /** Stable identifier, e.g. "pxp". */
  id: string
  /** Bumped when the rules change, so a stored session can say which rules it ran under. */
  version: string
  /** Validated parameters (n, k, rounds, budget, λ …); `parse` fills the defaults. */
  config: z.ZodType<Config, any>
  /** What a seat may say. */
  message: z.ZodType<Message, any>
  init(config: Config, instance: Instance): State
  /** Whose turn it is and what is asked of that seat, or the outcome. */
  next(state: State): A | D
  /** The state after one more message; throws a {@link ProtocolError} for a message the rules refuse. */
  apply(state: State, msg: Message): State
}

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

export function isDone<A extends Ask<string, string>, D extends Done<string>>(r: A | D): r is D {
  return r.done
}

/** Folds a message log into the state: the one way state is ever derived. */
export function replay<Config, State, Message, Instance>(
  protocol: Pick<Protocol<Config, State, Message, Instance>, 'init' | 'apply'>,
  config: Config,
  instance: Instance,
  messages: Iterable<Message>,
): State {
  let state = protocol.init(config, instance)
  for (const m of messages) state = protocol.apply(state, m)
  return state
}
