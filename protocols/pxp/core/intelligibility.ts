/**
 * PXP intelligibility (paper Definitions 1–2, Sec. 4.2, Fig. 4 and Fig. 5), computed from the tag
 * sequences of sessions. Pure: no I/O.
 *
 * For a session and an agent a ∈ {h, m}:
 *   T_a            = the tags a sent, in message order, INIT excluded (the paper's footnote counts
 *                    ⟨INIT_m, RATIFY_h, RATIFY_m⟩ as strongly intelligible for both, so INIT cannot
 *                    count against "every element is RATIFY or REVISE").
 *   oneWay(a)      ⇔ ∃ t ∈ T_a: t ∈ {RATIFY, REVISE}  ∧  REJECT ∉ T_a                    (Definition 1)
 *   twoWay         ⇔ oneWay(h) ∧ oneWay(m)
 *   strong(a)      ⇔ T_a ≠ ⟨⟩  ∧  ∀ t ∈ T_a: t ∈ {RATIFY, REVISE}                        (Definition 2)
 *   ultraStrong(a) ⇔ strong(a) ∧ REVISE ∈ T_a                                             (Definition 2)
 * (Definition 2 reads "every element"; pxp.md requires T_a non-empty, so an agent that sent nothing
 * but INIT is not strongly intelligible by vacuous truth. With it, strong(a) ⇒ oneWay(a).)
 *
 * Over the S sessions of one run (a repetition):
 *   count(P)       = #{sessions with property P};   proportion(P) = count(P) / S   (the maximum-likelihood estimate)
 *   byBound(a, j)  = #{sessions s : oneWay(a) holds for s restricted to its messages 1..j}
 *                    for j = 1 .. L, L the number of the last message of the longest session (Fig. 5).
 *                    byBound(a, L) = count(oneWay(a)). byBound is NOT monotone in j in general: a REJECT
 *                    at message j' removes a session that was one-way for a at every bound j < j'. It
 *                    is monotone when no session contains a REJECT.
 *
 * Over R repetitions (Sec. 4.2: "the median values"), for every count c:
 *   median(c_1..c_R)  (for even R, the mean of the two middle values), min, max.
 *   The reported proportion is median(count) / median(sessions).
 */
/** The two agents (the machine writes odd messages, the human even ones) and the tags, as PXP names them. */
export type Agent = 'm' | 'h'
export type PxpTag = 'INIT' | 'RATIFY' | 'REFUTE' | 'REVISE' | 'REJECT'

export interface TaggedMessage {
  /** Message number, 1-based. */
  j: number
  sender: Agent
  tag: PxpTag
}

const isGood = (t: PxpTag) => t === 'RATIFY' || t === 'REVISE'

/** T_a: the tags agent a sent, ordered by j, INIT excluded; only messages with j ≤ bound when given. */
export function agentTags(messages: readonly TaggedMessage[], a: Agent, bound = Number.POSITIVE_INFINITY): PxpTag[] {
  return messages
    .filter((m) => m.sender === a && m.j <= bound && m.tag !== 'INIT')
    .sort((x, y) => x.j - y.j)
    .map((m) => m.tag)
}

/** Definition 1: T contains RATIFY or REVISE, and no REJECT. */
export function isOneWay(T: readonly PxpTag[]): boolean {
  return T.some(isGood) && !T.includes('REJECT')
}

/** Definition 2: T is non-empty and every element is RATIFY or REVISE. */
export function isStrong(T: readonly PxpTag[]): boolean {
  return T.length > 0 && T.every(isGood)
}

/** Definition 2: strong, with at least one REVISE. */
export function isUltraStrong(T: readonly PxpTag[]): boolean {
  return isStrong(T) && T.includes('REVISE')
}

export interface SessionIntelligibility {
  oneWay: Record<Agent, boolean>
  twoWay: boolean
  strong: Record<Agent, boolean>
  ultraStrong: Record<Agent, boolean>
  /** The number of the last message (the largest j). */
  length: number
}

/** The properties of one session, straight from the definitions. */
export function sessionIntelligibility(messages: readonly TaggedMessage[]): SessionIntelligibility {
  const T = { h: agentTags(messages, 'h'), m: agentTags(messages, 'm') }
  const oneWay = { h: isOneWay(T.h), m: isOneWay(T.m) }
  return {
    oneWay,
    twoWay: oneWay.h && oneWay.m,
    strong: { h: isStrong(T.h), m: isStrong(T.m) },
    ultraStrong: { h: isUltraStrong(T.h), m: isUltraStrong(T.m) },
    length: messages.reduce((l, m) => Math.max(l, m.j), 0),
  }
}

/** oneWay(a) for the session restricted to messages 1..j. */
export function isOneWayAtBound(messages: readonly TaggedMessage[], a: Agent, j: number): boolean {
  return isOneWay(agentTags(messages, a, j))
}

// ---------------------------------------------------------------------------------------------
// Constant-size session summaries, so a stream of messages (in any order) can be counted without
// keeping the messages. They agree with the definitions above (a property test checks it).

export interface AgentSummary {
  /** |T_a|: non-INIT tags sent. */
  sent: number
  /** Tags in T_a that are RATIFY or REVISE. */
  good: number
  /** Tags in T_a that are REVISE. */
  revise: number
  /** The smallest j of a RATIFY or REVISE from a (null: none). */
  firstGood: number | null
  /** The smallest j of a REJECT from a (null: none). */
  firstReject: number | null
}

export interface SessionSummary {
  h: AgentSummary
  m: AgentSummary
  /** The largest j seen. */
  length: number
}

const emptyAgent = (): AgentSummary => ({ sent: 0, good: 0, revise: 0, firstGood: null, firstReject: null })
export const emptySummary = (): SessionSummary => ({ h: emptyAgent(), m: emptyAgent(), length: 0 })

const minOf = (a: number | null, b: number) => (a === null ? b : Math.min(a, b))

/** Adds one message to a summary (in place, for streaming; returns it). */
export function addToSummary(s: SessionSummary, msg: TaggedMessage): SessionSummary {
  s.length = Math.max(s.length, msg.j)
  if (msg.tag === 'INIT') return s
  const a = s[msg.sender]
  a.sent++
  if (isGood(msg.tag)) {
    a.good++
    a.firstGood = minOf(a.firstGood, msg.j)
  }
  if (msg.tag === 'REVISE') a.revise++
  if (msg.tag === 'REJECT') a.firstReject = minOf(a.firstReject, msg.j)
  return s
}

export function summarize(messages: readonly TaggedMessage[]): SessionSummary {
  const s = emptySummary()
  for (const m of messages) addToSummary(s, m)
  return s
}

/** oneWay(a) within messages 1..bound: a RATIFY/REVISE at j ≤ bound and no REJECT at j ≤ bound. */
export function summaryOneWay(a: AgentSummary, bound = Number.POSITIVE_INFINITY): boolean {
  return a.firstGood !== null && a.firstGood <= bound && (a.firstReject === null || a.firstReject > bound)
}

export function summaryIntelligibility(s: SessionSummary): SessionIntelligibility {
  const strong = (a: AgentSummary) => a.sent > 0 && a.good === a.sent
  const oneWay = { h: summaryOneWay(s.h), m: summaryOneWay(s.m) }
  return {
    oneWay,
    twoWay: oneWay.h && oneWay.m,
    strong: { h: strong(s.h), m: strong(s.m) },
    ultraStrong: { h: strong(s.h) && s.h.revise > 0, m: strong(s.m) && s.m.revise > 0 },
    length: s.length,
  }
}

// ---------------------------------------------------------------------------------------------
// Counting one repetition, aggregating repetitions.

export interface PerAgent<T> {
  human: T
  machine: T
}

export interface BoundCount<T> {
  j: number
  oneWayHuman: T
  oneWayMachine: T
}

export interface Counts<T> {
  oneWay: PerAgent<T>
  twoWay: T
  strong: PerAgent<T>
  ultraStrong: PerAgent<T>
  byBound: BoundCount<T>[]
}

export interface RepetitionCounts extends Counts<number> {
  sessions: number
}

/** The length of the longest session: the last bound byBound reports. */
export function longestSession(sessions: readonly SessionSummary[]): number {
  return sessions.reduce((l, s) => Math.max(l, s.length), 0)
}

/**
 * The counts of one repetition. byBound runs j = 1..maxBound; pass the longest session over all
 * repetitions so the repetitions line up (beyond a session's own length its count stays put).
 */
export function countRepetition(
  sessions: readonly SessionSummary[],
  maxBound = longestSession(sessions),
): RepetitionCounts {
  const c: RepetitionCounts = {
    sessions: sessions.length,
    oneWay: { human: 0, machine: 0 },
    twoWay: 0,
    strong: { human: 0, machine: 0 },
    ultraStrong: { human: 0, machine: 0 },
    byBound: Array.from({ length: maxBound }, (_, i) => ({ j: i + 1, oneWayHuman: 0, oneWayMachine: 0 })),
  }
  for (const s of sessions) {
    const p = summaryIntelligibility(s)
    c.oneWay.human += +p.oneWay.h
    c.oneWay.machine += +p.oneWay.m
    c.twoWay += +p.twoWay
    c.strong.human += +p.strong.h
    c.strong.machine += +p.strong.m
    c.ultraStrong.human += +p.ultraStrong.h
    c.ultraStrong.machine += +p.ultraStrong.m
    for (const b of c.byBound) {
      b.oneWayHuman += +summaryOneWay(s.h, b.j)
      b.oneWayMachine += +summaryOneWay(s.m, b.j)
    }
  }
  return c
}

/** The median; for an even number of values, the mean of the two middle ones. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('the median of no values is undefined')
  const v = [...values].sort((a, b) => a - b)
  const mid = Math.floor(v.length / 2)
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2
}

export interface Spread {
  median: number
  min: number
  max: number
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
}

export interface IntelligibilityReport extends Counts<Spread> {
  repetitions: number
  /** The median number of sessions per repetition. */
  sessions: number
}

/**
 * Median, min and max of every count over the repetitions. byBound runs to the longest byBound
 * among them; a shorter one (a repetition whose sessions were all shorter) keeps its last value,
 * as longer bounds do not change its sessions.
 */
export function aggregateRepetitions(reps: readonly RepetitionCounts[]): IntelligibilityReport {
  if (reps.length === 0) throw new RangeError('no repetitions to aggregate')
  const of = (pick: (r: RepetitionCounts) => number) => spread(reps.map(pick))
  const L = Math.max(...reps.map((r) => r.byBound.length))
  const atBound = (r: RepetitionCounts, j: number) => r.byBound[Math.min(j, r.byBound.length) - 1]
  return {
    repetitions: reps.length,
    sessions: median(reps.map((r) => r.sessions)),
    oneWay: { human: of((r) => r.oneWay.human), machine: of((r) => r.oneWay.machine) },
    twoWay: of((r) => r.twoWay),
    strong: { human: of((r) => r.strong.human), machine: of((r) => r.strong.machine) },
    ultraStrong: { human: of((r) => r.ultraStrong.human), machine: of((r) => r.ultraStrong.machine) },
    byBound: Array.from({ length: L }, (_, i) => ({
      j: i + 1,
      oneWayHuman: of((r) => atBound(r, i + 1)?.oneWayHuman ?? 0),
      oneWayMachine: of((r) => atBound(r, i + 1)?.oneWayMachine ?? 0),
    })),
  }
}

/** Proportion = count / total sessions (0 when there are no sessions). */
export function proportion(count: number, sessions: number): number {
  return sessions === 0 ? 0 : count / sessions
}

/** The reported proportions: median count / median sessions per repetition (Fig. 4's parentheses). */
export function reportProportions(r: IntelligibilityReport): Counts<number> {
  const p = (s: Spread) => proportion(s.median, r.sessions)
  return {
    oneWay: { human: p(r.oneWay.human), machine: p(r.oneWay.machine) },
    twoWay: p(r.twoWay),
    strong: { human: p(r.strong.human), machine: p(r.strong.machine) },
    ultraStrong: { human: p(r.ultraStrong.human), machine: p(r.ultraStrong.machine) },
    byBound: r.byBound.map((b) => ({ j: b.j, oneWayHuman: p(b.oneWayHuman), oneWayMachine: p(b.oneWayMachine) })),
  }
}

/**
 * Everything in one call: sessions grouped by repetition, each session a message list.
 * byBound runs to the longest session over all repetitions.
 */
export function intelligibilityReport(repetitions: readonly (readonly TaggedMessage[][])[]): IntelligibilityReport {
  const summaries = repetitions.map((sessions) => sessions.map(summarize))
  const L = Math.max(0, ...summaries.map(longestSession))
  return aggregateRepetitions(summaries.map((s) => countRepetition(s, L)))
}
