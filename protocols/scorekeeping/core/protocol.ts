/**
 * The clembench "privateshared" scorekeeping game (clp-research/clembench `privateshared/`, seeds/004;
 * ../shared/reference/reference-implementations.md §4) for one game instance, as a pure protocol.
 *
 * Seats: the `questioner` is the game master, a program (`gameMaster` below writes its messages); the
 * `answerer` (an LLM or a person) knows the slot values from its initial prompt. n = number of slots.
 *
 *   probing round 0:       for each slot (in the instance's probing order): probe → probe-answer,
 *                          again with the next reprompt suffix while the answer does not parse
 *   for r = 1 … n:         request of slot requestOrder[r−1] → answer,
 *                          then probing round r as above
 *
 * Every exchange is a message (`{seq, sender, kind, …}`), so a replay of the log reproduces the whole
 * game; probes are side questions and never enter the answerer's dialogue (see `answererPrompt`).
 *
 * Rules (clembench's `PrivateShared` game master; clemcore 3.x round numbering, where the preliminary
 * probing round is round 0 and uses `probes["0"]`):
 * - A slot answer is valid iff it starts with the ANSWER tag without its trailing space ("ANSWER:",
 *   no leading whitespace) and has no "\n" left after stripping "\n" from both ends. The parsed text is
 *   the reply with every "ANSWER:" removed, then stripped (Python whitespace).
 * - A probe answer is valid iff it starts with "ASIDE:", has no inner "\n", and the text with every
 *   "ASIDE:" removed, stripped and lower-cased starts with "yes" (value 1) or "no" (value 0: "Nope",
 *   "not sure" are no). Anything else is invalid ("NA", value 2).
 * - Slot filled ⇔ the requested slot's value, lower-cased, is a substring of the parsed answer,
 *   lower-cased. Anticipation: every slot whose value occurs in the parsed answer and whose
 *   ground-truth turn is later than r − 1 gets ground-truth turn r − 1 (initially a slot's turn is its
 *   0-based index in the request order). A probe of slot s in probing round r has ground truth
 *   1 if r > turn(s) else 0.
 * - A probe is asked at most once per reprompt suffix (5): try t sends PROBE with "ME: " replaced by
 *   "ME: " + suffix[t−1] + " " (try 1 therefore reads "ME:  Does …", two spaces). Still invalid after
 *   the last try: the game is aborted in that round (`aborted-probe`); that round is not played.
 * - Request counts per round r (index r of the logged lists): every answerer reply of round r (the slot
 *   answer and each probe try), parsed or violated.
 *
 * Where clembench's README and its current code (commit a717f23, the DialogueGameMaster refactor)
 * differ, or the code leaves a choice, Parley does this:
 * - Invalid slot answer (wrong tag, or a line break inside): the README (and clembench 2.0) abort the
 *   game; the current code only counts a violated request and goes on without checking the slot or
 *   probing in that round. Parley ABORTS (`aborted-answer`), as the README says.
 * - Request counting: the current code counts a slot answer in "Request Count" only when it was valid
 *   (in `_on_valid_player_response`), but in "Violated Request Count" when not; clembench 2.0 counted
 *   every answerer call. Parley counts every reply, so Request Count = Parsed + Violated always.
 * - Slot filling and anticipation test the parsed answer (tags removed, stripped), as the current code
 *   does; clembench 2.0 tested the raw reply. They differ only when a value overlaps the tag.
 * - Probing order: the README says "in a random order"; the code asks in the key order of
 *   `probes[r]` (equal to the key order of `slots` in every released instance). Parley asks in that
 *   order, carried explicitly as arrays in the instance (JSON objects stored in PostgreSQL jsonb lose
 *   their key order, so nothing here depends on it).
 * - Instances without `lang` (instances_v0.9*.json, instances_v1.0.json; the current code would fail
 *   on them) are read as "en".
 * - The questioner's messages are the texts the answerer receives; when an instance carries no texts
 *   (a bare clembench instance object, e.g. `parley scorekeeping replay`), they are empty and the game
 *   is scored all the same. With texts, `apply` refuses a questioner message whose text differs from
 *   what the game master says.
 * - The round numbering is clemcore 3.x's (the version clembench pins, >=3.2 <4): probing round 0 uses
 *   `probes["0"]`; the newest clemcore (2026) starts at −1, which would shift every round by one.
 * - `PROBE` is filled like Python's `str.format` with one `{}` (the first `{}` is replaced; braces are
 *   not otherwise interpreted).
 *
 * Scores (protocols/scorekeeping/core/clemscore.ts): `episodeOf(state)` gives what the game master logs, and
 * `scoresJson(episodeOf(state))` clembench's scores.json.
 */
import { z } from 'zod'
import type { PrivateSharedEpisode } from './clemscore'
import { type Ask, type Done, type Protocol, ProtocolError, type SeatDecl } from '../../../lib/protocols/types'

export const SCOREKEEPING_PROTOCOL_ID = 'scorekeeping'
export const SCOREKEEPING_PROTOCOL_VERSION = '1'

/** The English words of clembench's `resources/en_words.json` the game needs (tags, probe template). */
export const CLEMBENCH_EN_WORDS = {
  answer: 'ANSWER: ',
  aside: 'ASIDE: ',
  me: 'ME: ',
  probe: 'ME: {} Answer this question with yes or no and then stop.',
  ok: 'Ok.',
  yes: 'yes',
  no: 'no',
  /** What clembench's game master sends its programmatic questioner before each request (DUMMY_PROMPT). */
  dummyPrompt: 'What is the next request?',
} as const

/** The number of reprompt suffixes in clembench's `reprompts.json`, i.e. the tries per probe. */
export const DEFAULT_MAX_TRIES = 5

export const scorekeepingConfig = z.strictObject({})
export type ScorekeepingConfig = z.output<typeof scorekeepingConfig>

const words = z.strictObject({
  answer: z.string().min(1),
  aside: z.string().min(1),
  me: z.string().min(1),
  probe: z.string().includes('{}', { message: 'The probe template needs a {} for the question.' }),
  ok: z.string(),
  yes: z.string().min(1),
  no: z.string().min(1),
  /** DUMMY_PROMPT: only the exported interactions use it (older stored instances lack it). */
  dummyPrompt: z.string().optional(),
})
export type ScorekeepingWords = z.output<typeof words>

const slotName = z.string().min(1).max(200)

/**
 * One game instance with every order as an array: `slots` in slot order, `requestOrder`, and per
 * probing round r = 0 … n the probes in the order they are asked. Texts (`text`, `question`,
 * `initialPrompt`, `reprompts`) are optional: scoring needs none of them, prompts need them all.
 */
export const scorekeepingInstance = z
  .object({
    /** The clembench experiment (travel-booking, job-interview, restaurant, things-places, letter-number …). */
    experiment: z.string().optional(),
    gameId: z.number().int().optional(),
    lang: z.string().default('en'),
    /** The questioner's tag ("TRAVEL-AGENT"); requests reach the answerer as "<tag>: <request>". */
    tag: z.string().min(1),
    /** The private information, in slot order. */
    slots: z.array(z.object({ name: slotName, value: z.string().min(1, 'A slot value cannot be empty.') })).min(1),
    /** The order in which the questioner asks for the slots (a permutation of the slot names). */
    requestOrder: z.array(slotName),
    /** The request variant per slot (index into requests.json[slot]) and its text. */
    requests: z.array(z.object({ slot: slotName, index: z.number().int().min(0), text: z.string().optional() })),
    /** Probing round r (0 … n): the probes in the order asked, each with its variant and question text. */
    probes: z.array(
      z.array(z.object({ slot: slotName, index: z.number().int().min(0), question: z.string().optional() })),
    ),
    /** The answerer's initial prompt (the filled template). */
    initialPrompt: z.string().optional(),
    words: words.default(CLEMBENCH_EN_WORDS),
    /** The reprompt suffixes, one per try ("", "Please answer this question carefully.", …). */
    reprompts: z.array(z.string()).min(1).optional(),
  })
  .superRefine((inst, ctx) => {
    const names = inst.slots.map((s) => s.name)
    const n = names.length
    const issue = (message: string, path: (string | number)[]) => ctx.addIssue({ code: 'custom', message, path })
    const dup = names.find((s, i) => names.indexOf(s) !== i)
    if (dup !== undefined) issue(`The slot "${dup}" appears twice.`, ['slots'])
    const permutation = (list: readonly string[]) =>
      list.length === n && new Set(list).size === n && list.every((s) => names.includes(s))
    if (!permutation(inst.requestOrder))
      issue(`requestOrder must name every slot once (${names.join(', ')}).`, ['requestOrder'])
    if (!permutation(inst.requests.map((r) => r.slot)))
      issue(`requests must give one variant per slot (${names.join(', ')}).`, ['requests'])
    if (inst.probes.length !== n + 1)
      issue(`probes must have n + 1 = ${n + 1} probing rounds (0 … ${n}), not ${inst.probes.length}.`, ['probes'])
    inst.probes.forEach((round, r) => {
      if (!permutation(round.map((p) => p.slot)))
        issue(`Probing round ${r} must probe every slot once (${names.join(', ')}).`, ['probes', r])
    })
  })
export type ScorekeepingInstance = z.output<typeof scorekeepingInstance>
export type ScorekeepingInstanceInput = z.input<typeof scorekeepingInstance>

export const scorekeepingSeat = z.enum(['questioner', 'answerer'])
export type ScorekeepingSeat = z.infer<typeof scorekeepingSeat>

export const SCOREKEEPING_SEATS = [
  {
    name: 'questioner',
    label: 'Questioner (game master)',
    kinds: ['program'],
    programs: ['game-master'],
    description:
      'Asks for each slot in the request order and probes every slot before the first request and after each answer.',
  },
  {
    name: 'answerer',
    label: 'Answerer',
    kinds: ['llm', 'human'],
    description:
      'Knows every slot value; answers requests with "ANSWER: …" and the side questions with "ASIDE: yes/no".',
  },
] as const satisfies readonly SeatDecl[]

const seq = z.number().int().min(1)
const round = z.number().int().min(0)
const tryNumber = z.number().int().min(1)
const text = z.string().max(100_000)

const requestMessage = z.object({
  seq,
  sender: z.literal('questioner'),
  kind: z.literal('request'),
  round: z.number().int().min(1),
  slot: slotName,
  /** "<TAG>: <request>", exactly as the answerer receives it. */
  text,
})
const answerMessage = z.object({
  seq,
  sender: z.literal('answerer'),
  kind: z.literal('answer'),
  round: z.number().int().min(1),
  /** The raw reply. */
  text,
})
const probeMessage = z.object({
  seq,
  sender: z.literal('questioner'),
  kind: z.literal('probe'),
  round,
  slot: slotName,
  try: tryNumber,
  /** The probe with this try's reprompt suffix, exactly as the answerer receives it. */
  text,
})
const probeAnswerMessage = z.object({
  seq,
  sender: z.literal('answerer'),
  kind: z.literal('probe-answer'),
  round,
  slot: slotName,
  try: tryNumber,
  /** The raw reply. */
  text,
})

export const scorekeepingMessage = z.discriminatedUnion('kind', [
  requestMessage,
  answerMessage,
  probeMessage,
  probeAnswerMessage,
])
export type ScorekeepingMessage = z.output<typeof scorekeepingMessage>
export type RequestMessage = z.output<typeof requestMessage>
export type AnswerMessage = z.output<typeof answerMessage>
export type ProbeMessage = z.output<typeof probeMessage>
export type ProbeAnswerMessage = z.output<typeof probeAnswerMessage>

export type ScorekeepingAskKind = 'request' | 'answer' | 'probe' | 'probe-answer'
export type ScorekeepingAsk = Ask<ScorekeepingSeat, string, ScorekeepingAskKind> &
  (
    | { seat: 'questioner'; kind: 'request'; round: number; slot: string }
    | { seat: 'answerer'; kind: 'answer'; round: number; slot: string }
    | { seat: 'questioner'; kind: 'probe'; round: number; slot: string; try: number }
    | { seat: 'answerer'; kind: 'probe-answer'; round: number; slot: string; try: number }
  )

export type ScorekeepingDoneReason = 'complete' | 'aborted-probe' | 'aborted-answer'
export type ScorekeepingDone = Done<ScorekeepingDoneReason>
export const DONE_REASONS: Record<ScorekeepingDoneReason, string> = {
  complete: 'every slot was requested and every probing round answered',
  'aborted-probe': 'a probe got no valid yes/no answer after the last reprompt',
  'aborted-answer': 'a slot answer did not follow the format (tag or a line break)',
}

export type ScorekeepingErrorCode =
  | 'invalid-config'
  | 'invalid-instance'
  | 'invalid-message'
  | 'session-over'
  | 'wrong-seq'
  | 'out-of-turn'
  | 'wrong-text'
  | 'invalid-reply'
  | 'no-texts'

export class ScorekeepingError extends ProtocolError<ScorekeepingErrorCode> {
  constructor(code: ScorekeepingErrorCode, message: string) {
    super(SCOREKEEPING_PROTOCOL_ID, code, message)
    this.name = 'ScorekeepingError'
  }
}

// ---- parsing (clembench's `_validate_player_response`, `_parse_probing_response`) ----

/** The characters Python's `str.strip()` removes (str.isspace). */
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g')
/** Python's `s.strip()`. */
export const pyStrip = (s: string) => s.replace(PY_STRIP, '')
/** Python's `s.strip('\n')`. */
const stripNewlines = (s: string) => s.replace(/^\n+|\n+$/g, '')
/** Python's `s.replace(old, new)`: every occurrence, no patterns. */
const replaceAll = (s: string, old: string, by: string) => s.split(old).join(by)

/** True when the reply goes on after a line break (a "\n" left after stripping "\n" from both ends). */
export function hasContinuation(reply: string): boolean {
  return stripNewlines(reply).includes('\n')
}

export type SlotAnswerParse = { valid: true; text: string } | { valid: false; reason: 'tag' | 'line-break' }

/** A slot answer: valid iff it starts with "ANSWER:" and has no inner line break; `text` without the tags. */
export function parseSlotAnswer(
  reply: string,
  w: Pick<ScorekeepingWords, 'answer'> = CLEMBENCH_EN_WORDS,
): SlotAnswerParse {
  const tag = pyStrip(w.answer)
  if (!reply.startsWith(tag)) return { valid: false, reason: 'tag' }
  if (hasContinuation(reply)) return { valid: false, reason: 'line-break' }
  return { valid: true, text: pyStrip(replaceAll(reply, tag, '')) }
}

/** A probe answer's value: 1 yes, 0 no, 2 invalid ("NA"). */
export type ProbeValue = 0 | 1 | 2
export const INVALID_LABEL = 2

export function parseProbeAnswer(
  reply: string,
  w: Pick<ScorekeepingWords, 'aside' | 'yes' | 'no'> = CLEMBENCH_EN_WORDS,
): ProbeValue {
  const tag = pyStrip(w.aside)
  if (!reply.startsWith(tag) || hasContinuation(reply)) return INVALID_LABEL
  const clean = pyStrip(replaceAll(reply, tag, '')).toLowerCase()
  if (clean.startsWith(w.yes)) return 1
  if (clean.startsWith(w.no)) return 0
  return INVALID_LABEL
}

// ---- state ----

export interface ProbeRecord {
  slot: string
  /** The slot upper-cased, as clembench logs it. */
  target: string
  /** Ground truth: 1 if the round is later than the slot's ground-truth turn. */
  gt: 0 | 1
  /** Tries so far. */
  tries: number
  /** The latest raw reply (null before the first). */
  answer: string | null
  /** The latest reply's value (null before the first; 2 = invalid). */
  value: ProbeValue | null
}

export interface ProbingRound {
  round: number
  probes: ProbeRecord[]
  /** Every probe of the round got a valid answer. */
  played: boolean
}

export interface SlotTurn {
  round: number
  slot: string
  /** The raw reply. */
  answer: string
  /** The reply without tags (null when invalid). */
  parsed: string | null
  filled: boolean
  /** Slots whose ground-truth turn this answer moved to r − 1, with the turn they had before. */
  anticipated: { slot: string; from: number; to: number }[]
}

type Cursor =
  | { stage: 'probe' | 'probe-answer'; round: number; index: number; try: number }
  | { stage: 'request' | 'answer'; round: number }
  | { stage: 'over' }

export interface ScorekeepingState {
  readonly config: ScorekeepingConfig
  readonly instance: ScorekeepingInstance
  readonly messages: readonly ScorekeepingMessage[]
  readonly cursor: Cursor
  /** Ground-truth turn per slot, aligned with `instance.slots`. */
  readonly gtTurn: readonly number[]
  readonly probing: readonly ProbingRound[]
  readonly turns: readonly SlotTurn[]
  readonly requestCounts: readonly number[]
  readonly parsedRequestCounts: readonly number[]
  readonly violatedRequestCounts: readonly number[]
  readonly outcome: ScorekeepingDoneReason | null
}

/** Tries per probe: one per reprompt suffix (5 in clembench). */
export const maxTries = (instance: Pick<ScorekeepingInstance, 'reprompts'>) =>
  instance.reprompts?.length ?? DEFAULT_MAX_TRIES

function init(config: ScorekeepingConfig, rawInstance: ScorekeepingInstanceInput): ScorekeepingState {
  const c = scorekeepingConfig.safeParse(config ?? {})
  if (!c.success)
    throw new ScorekeepingError('invalid-config', `Invalid scorekeeping config: ${z.prettifyError(c.error)}`)
  const i = scorekeepingInstance.safeParse(rawInstance)
  if (!i.success)
    throw new ScorekeepingError('invalid-instance', `Invalid scorekeeping instance: ${z.prettifyError(i.error)}`)
  const instance = i.data
  const n = instance.slots.length
  const gtTurn = instance.slots.map((s) => instance.requestOrder.indexOf(s.name))
  const zeros = Array.from({ length: n + 1 }, () => 0)
  return {
    config: c.data,
    instance,
    messages: [],
    cursor: { stage: 'probe', round: 0, index: 0, try: 1 },
    gtTurn,
    probing: [newProbingRound(instance, gtTurn, 0)],
    turns: [],
    requestCounts: zeros,
    parsedRequestCounts: zeros,
    violatedRequestCounts: zeros,
    outcome: null,
  }
}

function newProbingRound(instance: ScorekeepingInstance, gtTurn: readonly number[], r: number): ProbingRound {
  const names = instance.slots.map((s) => s.name)
  return {
    round: r,
    played: false,
    probes: (instance.probes[r] ?? []).map((p) => ({
      slot: p.slot,
      target: p.slot.toUpperCase(),
      gt: r > gtTurn[names.indexOf(p.slot)]! ? 1 : 0,
      tries: 0,
      answer: null,
      value: null,
    })),
  }
}

function next(state: ScorekeepingState): ScorekeepingAsk | ScorekeepingDone {
  if (state.outcome) return { done: true, reason: state.outcome }
  const j = state.messages.length + 1
  const c = state.cursor
  const { instance } = state
  switch (c.stage) {
    case 'probe':
    case 'probe-answer': {
      const slot = instance.probes[c.round]![c.index]!.slot
      return c.stage === 'probe'
        ? { done: false, seat: 'questioner', j, kind: 'probe', round: c.round, slot, try: c.try }
        : { done: false, seat: 'answerer', j, kind: 'probe-answer', round: c.round, slot, try: c.try }
    }
    case 'request':
    case 'answer': {
      const slot = instance.requestOrder[c.round - 1]!
      return c.stage === 'request'
        ? { done: false, seat: 'questioner', j, kind: 'request', round: c.round, slot }
        : { done: false, seat: 'answerer', j, kind: 'answer', round: c.round, slot }
    }
    default:
      return { done: true, reason: state.outcome ?? 'complete' }
  }
}

const bump = (xs: readonly number[], i: number) => xs.map((x, k) => (k === i ? x + 1 : x))

function apply(state: ScorekeepingState, raw: ScorekeepingMessage): ScorekeepingState {
  const parsed = scorekeepingMessage.safeParse(raw)
  if (!parsed.success)
    throw new ScorekeepingError(
      'invalid-message',
      `Message ${(raw as { seq?: unknown })?.seq ?? '?'}: ${z.prettifyError(parsed.error)}`,
    )
  const msg = parsed.data
  const ask = next(state)
  if (ask.done) throw new ScorekeepingError('session-over', `The game is over (${ask.reason}); no message is accepted.`)
  if (msg.seq !== ask.j) throw new ScorekeepingError('wrong-seq', `Expected message ${ask.j}, got ${msg.seq}.`)
  const fits =
    msg.kind === ask.kind &&
    msg.sender === ask.seat &&
    msg.round === ask.round &&
    (msg.kind === 'answer' || msg.slot === ask.slot) &&
    (!('try' in ask) || ('try' in msg && msg.try === ask.try))
  if (!fits) throw new ScorekeepingError('out-of-turn', `Message ${msg.seq} should be ${describeAsk(ask)}.`)
  if (msg.kind === 'request' || msg.kind === 'probe') {
    const expected = gameMasterText(state, ask)
    if (expected !== null && msg.text !== expected)
      throw new ScorekeepingError(
        'wrong-text',
        `Message ${msg.seq}: the game master says ${JSON.stringify(expected)}, not ${JSON.stringify(msg.text)}.`,
      )
  }
  const messages = [...state.messages, msg]
  const c = state.cursor
  const { instance } = state
  switch (msg.kind) {
    case 'probe':
      if (c.stage !== 'probe') break
      return { ...state, messages, cursor: { ...c, stage: 'probe-answer' } }
    case 'request':
      if (c.stage !== 'request') break
      return { ...state, messages, cursor: { stage: 'answer', round: c.round } }
    case 'probe-answer': {
      if (c.stage !== 'probe-answer') break
      const r = c.round
      const value = parseProbeAnswer(msg.text, instance.words)
      const valid = value !== INVALID_LABEL
      const roundState = state.probing[r]!
      const probes = roundState.probes.map((p, i) =>
        i === c.index ? { ...p, tries: c.try, answer: msg.text, value } : p,
      )
      const requestCounts = bump(state.requestCounts, r)
      const parsedRequestCounts = valid ? bump(state.parsedRequestCounts, r) : state.parsedRequestCounts
      const violatedRequestCounts = valid ? state.violatedRequestCounts : bump(state.violatedRequestCounts, r)
      const lastProbe = c.index + 1 >= probes.length
      const played = valid && lastProbe
      const probing = state.probing.map((p, i) => (i === r ? { ...p, probes, played } : p))
      let cursor: Cursor
      let outcome: ScorekeepingDoneReason | null = null
      if (!valid) {
        if (c.try >= maxTries(instance)) {
          cursor = { stage: 'over' }
          outcome = 'aborted-probe'
        } else cursor = { ...c, stage: 'probe', try: c.try + 1 }
      } else if (!lastProbe) cursor = { stage: 'probe', round: r, index: c.index + 1, try: 1 }
      else if (r < instance.slots.length) cursor = { stage: 'request', round: r + 1 }
      else {
        cursor = { stage: 'over' }
        outcome = 'complete'
      }
      return {
        ...state,
        messages,
        cursor,
        probing,
        requestCounts,
        parsedRequestCounts,
        violatedRequestCounts,
        outcome,
      }
    }
    case 'answer': {
      if (c.stage !== 'answer') break
      const r = c.round
      const slot = instance.requestOrder[r - 1]!
      const answer = parseSlotAnswer(msg.text, instance.words)
      const requestCounts = bump(state.requestCounts, r)
      if (!answer.valid) {
        const turn: SlotTurn = { round: r, slot, answer: msg.text, parsed: null, filled: false, anticipated: [] }
        return {
          ...state,
          messages,
          cursor: { stage: 'over' },
          turns: [...state.turns, turn],
          requestCounts,
          violatedRequestCounts: bump(state.violatedRequestCounts, r),
          outcome: 'aborted-answer',
        }
      }
      const said = answer.text.toLowerCase()
      const value = instance.slots.find((s) => s.name === slot)!.value
      const filled = said.includes(value.toLowerCase())
      const turnIndex = r - 1
      const anticipated: SlotTurn['anticipated'] = []
      const gtTurn = instance.slots.map((s, i) => {
        const from = state.gtTurn[i]!
        if (said.includes(s.value.toLowerCase()) && turnIndex < from) {
          anticipated.push({ slot: s.name, from, to: turnIndex })
          return turnIndex
        }
        return from
      })
      const turn: SlotTurn = { round: r, slot, answer: msg.text, parsed: answer.text, filled, anticipated }
      return {
        ...state,
        messages,
        cursor: { stage: 'probe', round: r, index: 0, try: 1 },
        gtTurn,
        probing: [...state.probing, newProbingRound(instance, gtTurn, r)],
        turns: [...state.turns, turn],
        requestCounts,
        parsedRequestCounts: bump(state.parsedRequestCounts, r),
      }
    }
  }
  // unreachable: `fits` matched the message to the cursor's ask
  throw new ScorekeepingError('out-of-turn', `Message ${msg.seq} should be ${describeAsk(ask)}.`)
}

function describeAsk(ask: ScorekeepingAsk): string {
  switch (ask.kind) {
    case 'request':
      return `the questioner's request for "${ask.slot}" (round ${ask.round})`
    case 'answer':
      return `the answerer's answer in round ${ask.round}`
    case 'probe':
      return `the questioner's probe of "${ask.slot}" in probing round ${ask.round}, try ${ask.try}`
    case 'probe-answer':
      return `the answerer's reply to the probe of "${ask.slot}" in probing round ${ask.round}, try ${ask.try}`
  }
}

export const scorekeeping: Protocol<
  ScorekeepingConfig,
  ScorekeepingState,
  ScorekeepingMessage,
  ScorekeepingInstanceInput,
  ScorekeepingAsk,
  ScorekeepingDone
> & { init: typeof init; apply: typeof apply; next: typeof next } = {
  id: SCOREKEEPING_PROTOCOL_ID,
  version: SCOREKEEPING_PROTOCOL_VERSION,
  label: 'Scorekeeping game (clembench privateshared)',
  config: scorekeepingConfig,
  message: scorekeepingMessage,
  instance: scorekeepingInstance,
  seats: SCOREKEEPING_SEATS,
  init,
  next,
  apply,
}

// ---- the game master (the questioner seat's program) ----

/** The probe question of slot `slot` in round `round` inside the PROBE template (no suffix); null without texts. */
export function probeQuestion(instance: ScorekeepingInstance, round: number, slot: string): string | null {
  const q = instance.probes[round]?.find((p) => p.slot === slot)?.question
  if (q === undefined) return null
  const i = instance.words.probe.indexOf('{}')
  return instance.words.probe.slice(0, i) + q + instance.words.probe.slice(i + 2)
}

/** The probe as sent on try `t`: every "ME: " becomes "ME: " + suffix[t − 1] + " "; null without texts. */
export function probeText(instance: ScorekeepingInstance, round: number, slot: string, t: number): string | null {
  const question = probeQuestion(instance, round, slot)
  const suffix = instance.reprompts?.[t - 1]
  if (question === null || suffix === undefined) return null
  const me = instance.words.me
  return replaceAll(question, me, `${me}${suffix} `)
}

/** "<TAG>: <request text>" for `slot`; null without texts. */
export function requestText(instance: ScorekeepingInstance, slot: string): string | null {
  const t = instance.requests.find((r) => r.slot === slot)?.text
  return t === undefined ? null : `${instance.tag}: ${t}`
}

function gameMasterText(state: ScorekeepingState, ask: ScorekeepingAsk): string | null {
  if (ask.kind === 'request') return requestText(state.instance, ask.slot)
  if (ask.kind === 'probe') return probeText(state.instance, ask.round, ask.slot, ask.try)
  return null
}

/**
 * The questioner's message for `ask` (a `request` or a `probe`): what clembench's programmatic
 * questioner and game master send. The text is empty when the instance carries no texts.
 */
export function gameMaster(state: ScorekeepingState, ask: ScorekeepingAsk): RequestMessage | ProbeMessage {
  if (ask.kind === 'request')
    return {
      seq: ask.j,
      sender: 'questioner',
      kind: 'request',
      round: ask.round,
      slot: ask.slot,
      text: requestText(state.instance, ask.slot) ?? '',
    }
  if (ask.kind === 'probe')
    return {
      seq: ask.j,
      sender: 'questioner',
      kind: 'probe',
      round: ask.round,
      slot: ask.slot,
      try: ask.try,
      text: probeText(state.instance, ask.round, ask.slot, ask.try) ?? '',
    }
  throw new ScorekeepingError('out-of-turn', `The game master writes requests and probes, not ${describeAsk(ask)}.`)
}

/** The answerer's message for `ask` (an `answer` or a `probe-answer`) with the raw reply `text`. */
export function answererMessage(ask: ScorekeepingAsk, text: string): AnswerMessage | ProbeAnswerMessage {
  if (ask.kind === 'answer') return { seq: ask.j, sender: 'answerer', kind: 'answer', round: ask.round, text }
  if (ask.kind === 'probe-answer')
    return {
      seq: ask.j,
      sender: 'answerer',
      kind: 'probe-answer',
      round: ask.round,
      slot: ask.slot,
      try: ask.try,
      text,
    }
  throw new ScorekeepingError('out-of-turn', `The answerer does not write ${describeAsk(ask)}.`)
}

/**
 * Plays one game to its end: the game master writes the questioner's messages, `reply` the answerer's
 * raw replies. The state is the fold of the messages (`replay(scorekeeping, config, instance, state.messages)`).
 */
export function playGame(
  instance: ScorekeepingInstanceInput,
  reply: (ask: ScorekeepingAsk & { seat: 'answerer' }, state: ScorekeepingState) => string,
  config: ScorekeepingConfig = {},
): ScorekeepingState {
  let state = init(config, instance)
  for (;;) {
    const ask = next(state)
    if (ask.done) return state
    const msg =
      ask.seat === 'questioner'
        ? gameMaster(state, ask)
        : answererMessage(ask, reply(ask as ScorekeepingAsk & { seat: 'answerer' }, state))
    state = apply(state, msg)
  }
}

// ---- what the answerer sees ----

export interface ChatMessage {
  role: 'user' | 'assistant'
  content: string
}

/**
 * The chat an answerer LLM receives for `ask` (an `answer` or a `probe-answer`), as clembench builds
 * it: the initial prompt and the fake reply "Ok." (two separate messages: privateshared appends them
 * to the answerer's history itself and never uses clemcore's initial-prompt merge with two newlines),
 * then the real dialogue so far (each request and its answer; probes are side questions, never kept),
 * then the current request or probe as the last user message.
 */
export function answererPrompt(state: ScorekeepingState, ask: ScorekeepingAsk): ChatMessage[] {
  const { instance } = state
  if (ask.kind !== 'answer' && ask.kind !== 'probe-answer')
    throw new ScorekeepingError('out-of-turn', `The answerer is not asked for ${describeAsk(ask)}.`)
  if (instance.initialPrompt === undefined)
    throw new ScorekeepingError('no-texts', 'This instance carries no initial prompt; an answerer cannot be prompted.')
  const chat: ChatMessage[] = [
    { role: 'user', content: instance.initialPrompt },
    { role: 'assistant', content: instance.words.ok },
  ]
  for (const m of state.messages) {
    if (m.kind === 'request') chat.push({ role: 'user', content: m.text })
    else if (m.kind === 'answer') chat.push({ role: 'assistant', content: m.text })
  }
  const current = state.messages.at(-1)
  if (ask.kind === 'probe-answer') {
    if (current?.kind !== 'probe')
      throw new ScorekeepingError('out-of-turn', 'The probe the answerer is asked about is not in the log.')
    chat.push({ role: 'user', content: current.text })
  } else if (current?.kind !== 'request')
    throw new ScorekeepingError('out-of-turn', 'The request the answerer is asked about is not in the log.')
  // for an answer, the request is already the last user message of the dialogue above
  return chat
}

/**
 * A person's input as the answerer's message text, with the tags the game expects added for them:
 * - `answer`: the typed text on one line → "ANSWER: <text>" (surrounding whitespace trimmed; an empty
 *   text or a line break is refused, since the game would abort on a line break);
 * - `probe-answer`: a yes/no choice (`'yes'`, `'no'` or a boolean) → "ASIDE: yes" / "ASIDE: no".
 * Throws a ScorekeepingError (`invalid-reply`) for anything else.
 */
export function humanReply(
  askKind: 'answer' | 'probe-answer',
  input: string | boolean,
  w: Pick<ScorekeepingWords, 'answer' | 'aside' | 'yes' | 'no'> = CLEMBENCH_EN_WORDS,
): string {
  if (askKind === 'answer') {
    if (typeof input !== 'string') throw new ScorekeepingError('invalid-reply', 'An answer is a line of text.')
    if (/[\r\n\u2028\u2029]/.test(input))
      throw new ScorekeepingError('invalid-reply', 'An answer must be one line (the game ends on a line break).')
    const t = input.trim()
    if (!t) throw new ScorekeepingError('invalid-reply', 'The answer is empty.')
    return `${w.answer}${t}`
  }
  if (askKind === 'probe-answer') {
    const v = typeof input === 'boolean' ? input : input.trim().toLowerCase()
    if (v === true || v === 'yes') return `${w.aside}${w.yes}`
    if (v === false || v === 'no') return `${w.aside}${w.no}`
    throw new ScorekeepingError('invalid-reply', 'A side question is answered with yes or no.')
  }
  throw new ScorekeepingError('invalid-reply', `A person does not write ${askKind as string} messages.`)
}

// ---- scoring ----

/** What clembench's game master logs for the scorer, from a state (meaningful once the game is done). */
export function episodeOf(state: ScorekeepingState): PrivateSharedEpisode {
  return {
    slots: state.instance.slots.length,
    aborted: state.outcome === 'aborted-probe' || state.outcome === 'aborted-answer',
    playedProbeRounds: state.probing.filter((r) => r.played).length,
    probes: state.probing.map((r) =>
      r.probes.filter((p) => p.value !== null).map((p) => ({ gt: p.gt, value: p.value as number })),
    ),
    filledSlots: state.turns.filter((t) => t.parsed !== null).map((t) => t.filled),
    requestCounts: state.requestCounts,
    parsedRequestCounts: state.parsedRequestCounts,
    violatedRequestCounts: state.violatedRequestCounts,
  }
}
