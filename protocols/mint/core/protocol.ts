/**
 * MINT (seed 003 part A, Wang et al., "MINT: Evaluating LLMs in Multi-turn Interaction with Tools and
 * Language Feedback"; ../shared/reference/mint-and-llm-labelling.md §A.2) for one task, as a pure protocol.
 *
 * Seats: `agent` (the evaluated model, an LLM or a person), `tool` (a program: the Python sandbox, which
 * runs the turn's `<execute>` code and returns its output), `env` (a program: the task's success check,
 * which gives the verdict on a proposed `<solution>`), `feedback` (an LLM simulating the expert, or a
 * person; never asked when the run has no feedback).
 *
 *   for each turn:  agent reply → proposal (<solution>)   → env verdict (correct ends with task_success;
 *                                                            wrong: "Your answer is wrong.")
 *                               → tool call (<execute>)   → tool output (the observation)
 *                               → neither                 → the formatting-error message (an invalid action)
 *                   → budget check (max_propose_steps, max_steps) → countdown line
 *                   → feedback when the episode goes on (dense: every turn; sparse: after a proposal)
 *
 * As the authors' env (mint/envs/general_env.py, commit 3f7f12c): invalid actions use up turns; a proposal
 * with an empty `<solution></solution>` counts as a proposal and is answered with the formatting-error
 * message; the observation of the turn that ends the episode is never logged. Sparse feedback is not in
 * the released code: it follows the paper (feedback only after a proposal).
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError, type SeatDecl } from '../../../lib/protocols/types'

export const MINT_PROTOCOL_ID = 'mint'
export const MINT_PROTOCOL_VERSION = '1'

export const TASK_TYPES = ['reasoning', 'code_generation', 'decision_making'] as const
export type TaskType = (typeof TASK_TYPES)[number]
export const DATASETS = ['gsm8k', 'hotpotqa', 'math', 'mmlu', 'theoremqa', 'humaneval', 'mbpp', 'alfworld'] as const
export type Dataset = (typeof DATASETS)[number]
export const TASK_TYPE_OF: Record<Dataset, TaskType> = {
  gsm8k: 'reasoning',
  hotpotqa: 'reasoning',
  math: 'reasoning',
  mmlu: 'reasoning',
  theoremqa: 'reasoning',
  humaneval: 'code_generation',
  mbpp: 'code_generation',
  alfworld: 'decision_making',
}
export const ALFWORLD_TYPES = ['put', 'clean', 'heat', 'cool', 'examine', 'puttwo'] as const
export type AlfworldType = (typeof ALFWORLD_TYPES)[number]

/** §A.3.3 verbatim, as the authors' INVALID_INPUT_MESSAGE (with its two trailing spaces). */
export const INVALID_INPUT_MESSAGE =
  "I don't understand your input. \n" +
  'If you want to execute code, please use <execute> YOUR_CODE_HERE </execute>.\n' +
  'If you want to give me an answer, please use <solution> YOUR_SOLUTION_HERE </solution>.\n' +
  'For example: The answer to the question is <solution> 42 </solution>. \n'
export const WRONG_ANSWER = 'Your answer is wrong.'

/** The evaluated model's settings (the authors' OpenAILMAgent) and the feedback model's (OpenAIFeedbackAgent). */
export const AGENT_LLM_SETTINGS = {
  /** The released runs send the instruction prompt as one user message (see addSystemMessage). */
  addSystemMessage: false,
  temperature: 0,
  maxTokens: 512,
  stop: ['\nObservation:', '\nExpert feedback:', '\nTask:', '\n---'],
} as const
export const FEEDBACK_LLM_SETTINGS = {
  temperature: 0,
  maxTokens: 1024,
  stop: ['\nObservation:', '\nTask:', '\nAssistant:'],
} as const

export const MAX_REPLY = 100_000
export const MAX_OBSERVATION = 100_000

export const mintFeedback = z.strictObject({
  /** none: no feedback seat; textual: the feedback text; binary: its first sentence as GOOD/BAD. */
  mode: z.enum(['none', 'textual', 'binary']).default('none'),
  /** Whether the feedback provider sees the reference (the authors' PHF=GT), else "NOT GIVEN" (no_GT). */
  groundTruth: z.boolean().default(false),
  /** dense: after every turn; sparse: only after a proposal (paper §C.1). */
  frequency: z.enum(['dense', 'sparse']).default('dense'),
})
export type MintFeedback = z.output<typeof mintFeedback>

export const mintConfig = z
  .strictObject({
    /** k: the interaction budget (max steps), default 5. */
    k: z.number().int().min(1).max(10).default(5),
    /** p: proposals allowed; absent: 2, or 1 when k = 1 (the authors' max1_p1). */
    p: z.number().int().min(1).max(10).optional(),
    feedback: mintFeedback.default({ mode: 'none', groundTruth: false, frequency: 'dense' }),
    /** Countdown line after each turn (the authors' `+cd`); on in every released run. */
    countDown: z.boolean().default(true),
  })
  .transform((c) => ({ ...c, p: c.p ?? (c.k === 1 ? 1 : 2) }))
export type MintConfig = z.output<typeof mintConfig>

export const mintInstance = z.object({
  /** The task's id in its data set (a game id for ALFWorld). */
  id: z.string().min(1).max(500),
  dataset: z.enum(DATASETS),
  /** The data set's prompt as released (test_prompts.json `prompt`, ALFWorld: the game's opening text). */
  prompt: z.string().min(1).max(50_000),
  /** The reference (an answer, a letter, test code, or the ALFWorld ground-truth trajectory). */
  reference: z.string().max(50_000),
  /** TheoremQA's answer type (integer, float, list of integer, bool, option …). */
  answerType: z.string().max(100).optional(),
  /** ALFWorld's sub-type (picks the in-context example). */
  alfworldType: z.enum(ALFWORLD_TYPES).optional(),
})
export type MintInstance = z.output<typeof mintInstance>

export const mintSeat = z.enum(['agent', 'tool', 'env', 'feedback'])
export type MintSeat = z.infer<typeof mintSeat>

export const MINT_SEATS = [
  {
    name: 'agent',
    label: 'Evaluated model',
    kinds: ['llm', 'human'],
    description:
      'Writes each turn: a <thought>, then <execute> code for the Python tool or a <solution> (temperature 0, at most 512 tokens, stops at the next Observation / Expert feedback / Task / ---).',
  },
  {
    name: 'tool',
    label: 'Python tool',
    kinds: ['program'],
    programs: ['python-sandbox'],
    description:
      'Runs the turn’s <execute> blocks in the episode’s persistent Python session (sandboxed; 30 s; output cut at 2,000 characters). For ALFWorld the tools act in the household.',
  },
  {
    name: 'env',
    label: 'Success check',
    kinds: ['program'],
    programs: ['mint-check'],
    description: 'Checks a proposed <solution> against the reference with the data set’s rule (checks.ts).',
  },
  {
    name: 'feedback',
    label: 'Expert feedback',
    kinds: ['llm', 'human', 'program'],
    /** `no-feedback`: the seat of a run without feedback (mode none), never asked. */
    programs: ['no-feedback'],
    description:
      'Comments on the latest turn as an expert (GPT-4 in the paper; temperature 0, at most 1,024 tokens), with or without the reference; binary feedback keeps GOOD / BAD. The program no-feedback: a run without feedback.',
  },
] as const satisfies readonly SeatDecl[]

const seq = z.number().int().min(1)

const agentMessage = z.object({
  seq,
  sender: z.literal('agent'),
  kind: z.literal('turn'),
  /** The reply exactly as written (a leading "Assistant:" is kept as the authors keep it). */
  content: z.string().max(MAX_REPLY),
  /** The model call failed (e.g. context length exceeded): the episode ends with `error`. */
  error: z.string().max(20_000).nullable().default(null),
})
const toolMessage = z.object({
  seq,
  sender: z.literal('tool'),
  kind: z.literal('observation'),
  /** The tool's output as returned (the observation is its trim, as the authors' `.strip()`). */
  output: z.string().max(MAX_OBSERVATION),
  /** ALFWorld: the action completed the household goal (ends the episode with task_success). */
  done: z.boolean().default(false),
})
const envMessage = z.object({
  seq,
  sender: z.literal('env'),
  kind: z.literal('verdict'),
  correct: z.boolean(),
})
const feedbackMessage = z.object({
  seq,
  sender: z.literal('feedback'),
  kind: z.literal('feedback'),
  /** The feedback as written (binary mode: the protocol keeps GOOD / BAD of its first sentence). */
  text: z.string().max(50_000),
})
export const mintMessage = z.discriminatedUnion('sender', [agentMessage, toolMessage, envMessage, feedbackMessage])
export type MintMessage = z.output<typeof mintMessage>
/** A message without its number (each sender's shape kept apart). */
export type MintMessageBody = MintMessage extends infer M ? (M extends MintMessage ? Omit<M, 'seq'> : never) : never

export type ActionKind = 'propose_solution' | 'use_tool' | 'invalid_action'
export type TerminateReason = 'task_success' | 'max_steps' | 'max_propose_steps' | 'error'
export type MintAskKind = 'turn' | 'execute' | 'verdict' | 'feedback'

export interface MintTurn {
  /** The agent's reply. */
  reply: string
  /** What the reply was: a proposal, a tool call, an invalid action (no code), or a failed model call. */
  action: ActionKind | 'error'
  /** The joined <execute> code of a tool call; the joined <solution> of a proposal. */
  code: string | null
  answer: string | null
  /** The observation text (null: a proposal's "Your answer is wrong." or a turn not yet observed). */
  observation: string | null
  correct: boolean | null
  /** [steps left, proposals left] after the turn (null without countdown or before the budget check). */
  turnInfo: [number, number] | null
  /** The feedback after the turn ('' when the provider gave none; null when not asked). */
  feedback: string | null
}

export interface MintState {
  config: MintConfig
  instance: MintInstance
  turns: MintTurn[]
  counts: Record<ActionKind, number>
  /** Who writes next (null: finished). */
  pending: Exclude<MintAskKind, never> | null
  finished: boolean
  success: boolean
  reason: TerminateReason | null
  error: string | null
  lastSeq: number
}

export type MintAsk = Ask<MintSeat, never, MintAskKind>
export type MintDone = Done<TerminateReason>

export type MintErrorCode = 'finished' | 'not_your_turn' | 'bad_seq'

function fail(code: MintErrorCode, message: string): never {
  throw new ProtocolError<MintErrorCode>(MINT_PROTOCOL_ID, code, message)
}

/** The joined, trimmed contents of every `<tag>…</tag>` (the authors' parse_action), '' when none. */
export function extractTagged(reply: string, tag: 'execute' | 'solution'): string {
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g')
  return [...`\n${reply}\n`.matchAll(re)].map((m) => pyStrip(m[1] ?? '')).join('\n')
}

/** Python's str.strip() with no argument (ASCII whitespace and the Unicode spaces it also strips). */
export function pyStrip(s: string): string {
  let a = 0
  let b = s.length
  while (a < b && isPySpace(s.charCodeAt(a))) a++
  while (b > a && isPySpace(s.charCodeAt(b - 1))) b--
  return s.slice(a, b)
}

/** Python's str.isspace() for one UTF-16 unit (JS's \s differs: it has U+FEFF and lacks U+001C–U+001F, U+0085). */
function isPySpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    (c >= 0x1c && c <= 0x20) ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  )
}

/** The authors' lm_output_to_action: a reply with `<solution>` is a proposal, anything else a tool call. */
export function isProposal(reply: string): boolean {
  return reply.includes('<solution>')
}

/**
 * Binary feedback (the authors' OpenAIFeedbackAgent): the first sentence (`[^.]*\.`) mapped to
 * "This is GOOD." when it holds GOOD, else "This is BAD." when it holds BAD; '' otherwise (the authors'
 * agent raises there and the episode goes on without feedback).
 */
export function binaryFeedback(text: string): string {
  const first = /[^.]*\./.exec(text)?.[0]
  if (first === undefined) return ''
  if (first.includes('GOOD')) return 'This is GOOD.'
  if (first.includes('BAD')) return 'This is BAD.'
  return ''
}

function used(counts: Record<ActionKind, number>): number {
  return counts.propose_solution + counts.use_tool + counts.invalid_action
}

/** After the observation: the budget check, the countdown, and who is next. */
function closeTurn(state: MintState, turn: MintTurn): MintState {
  const { config } = state
  let { finished, reason, success } = state
  if (!finished) {
    if (state.counts.propose_solution >= config.p) {
      finished = true
      success = false
      reason = 'max_propose_steps'
    } else if (used(state.counts) >= config.k) {
      finished = true
      success = false
      reason = 'max_steps'
    }
  }
  const turnInfo: [number, number] | null = config.countDown
    ? [config.k - used(state.counts), config.p - state.counts.propose_solution]
    : null
  const closed = { ...turn, turnInfo }
  const asksFeedback =
    !finished &&
    config.feedback.mode !== 'none' &&
    (config.feedback.frequency === 'dense' || turn.action === 'propose_solution')
  return {
    ...state,
    turns: [...state.turns.slice(0, -1), closed],
    finished,
    reason,
    success,
    pending: finished ? null : asksFeedback ? 'feedback' : 'turn',
  }
}

export const mintProtocol: Protocol<MintConfig, MintState, MintMessage, MintInstance, MintAsk, MintDone> = {
  id: MINT_PROTOCOL_ID,
  version: MINT_PROTOCOL_VERSION,
  label: 'MINT (multi-turn tools and feedback)',
  config: mintConfig,
  message: mintMessage,
  instance: mintInstance,
  seats: MINT_SEATS,

  init(config, instance) {
    return {
      config,
      instance,
      turns: [],
      counts: { propose_solution: 0, use_tool: 0, invalid_action: 0 },
      pending: 'turn',
      finished: false,
      success: false,
      reason: null,
      error: null,
      lastSeq: 0,
    }
  },

  next(state) {
    if (state.finished || state.pending === null) return { done: true, reason: state.reason ?? 'error' }
    const j = state.lastSeq + 1
    const seat: MintSeat =
      state.pending === 'turn'
        ? 'agent'
        : state.pending === 'execute'
          ? 'tool'
          : state.pending === 'verdict'
            ? 'env'
            : 'feedback'
    return { done: false, seat, j, kind: state.pending }
  },

  apply(state, msg) {
    if (state.finished) fail('finished', `Message ${msg.seq}: the episode has ended (${state.reason}).`)
    if (msg.seq !== state.lastSeq + 1)
      fail('bad_seq', `Message ${msg.seq}: expected message number ${state.lastSeq + 1}.`)
    const ask = mintProtocol.next(state)
    if (ask.done || ask.seat !== msg.sender)
      fail('not_your_turn', `Message ${msg.seq}: it is ${ask.done ? 'nobody' : ask.seat}'s turn, not ${msg.sender}'s.`)
    const base = { ...state, lastSeq: msg.seq }
    const counts = { ...state.counts }
    switch (msg.sender) {
      case 'agent': {
        const turn: MintTurn = {
          reply: msg.content,
          action: 'error',
          code: null,
          answer: null,
          observation: null,
          correct: null,
          turnInfo: null,
          feedback: null,
        }
        if (msg.error !== null) {
          turn.observation = `An error occurred. ${msg.error}`
          return closeTurn(
            {
              ...base,
              turns: [...state.turns, turn],
              finished: true,
              success: false,
              reason: 'error',
              error: msg.error,
            },
            turn,
          )
        }
        if (isProposal(msg.content)) {
          counts.propose_solution++
          turn.action = 'propose_solution'
          turn.answer = extractTagged(msg.content, 'solution')
          if (turn.answer === '') {
            turn.observation = INVALID_INPUT_MESSAGE
            return closeTurn({ ...base, counts, turns: [...state.turns, turn] }, turn)
          }
          return { ...base, counts, turns: [...state.turns, turn], pending: 'verdict' }
        }
        turn.code = extractTagged(msg.content, 'execute')
        if (turn.code === '') {
          counts.invalid_action++
          turn.action = 'invalid_action'
          turn.observation = INVALID_INPUT_MESSAGE
          return closeTurn({ ...base, counts, turns: [...state.turns, turn] }, turn)
        }
        counts.use_tool++
        turn.action = 'use_tool'
        return { ...base, counts, turns: [...state.turns, turn], pending: 'execute' }
      }
      case 'tool': {
        const last = state.turns[state.turns.length - 1] as MintTurn
        const turn = { ...last, observation: pyStrip(msg.output) }
        const turns = [...state.turns.slice(0, -1), turn]
        if (msg.done) return closeTurn({ ...base, turns, finished: true, success: true, reason: 'task_success' }, turn)
        return closeTurn({ ...base, turns }, turn)
      }
      case 'env': {
        const last = state.turns[state.turns.length - 1] as MintTurn
        const turn = { ...last, correct: msg.correct }
        const turns = [...state.turns.slice(0, -1), turn]
        if (msg.correct)
          return closeTurn({ ...base, turns, finished: true, success: true, reason: 'task_success' }, turn)
        return closeTurn({ ...base, turns }, turn)
      }
      case 'feedback': {
        const last = state.turns[state.turns.length - 1] as MintTurn
        const text = state.config.feedback.mode === 'binary' ? binaryFeedback(msg.text) : msg.text
        return { ...base, turns: [...state.turns.slice(0, -1), { ...last, feedback: text }], pending: 'turn' }
      }
    }
  },
}

/** The observation part of a turn's user message (the authors' StepOutput.to_str), without feedback. */
export function observationText(turn: MintTurn): string {
  let out = 'Observation:\n'
  if (turn.observation !== null) out += `${turn.observation}\n`
  else if (turn.correct !== true) out += `${WRONG_ANSWER}\n`
  if (turn.turnInfo !== null) {
    const [steps, proposals] = turn.turnInfo
    out += `You have ${steps} steps left and ${proposals} chances to propose solution left.\n`
    if (steps <= 1) out += 'You should take the last step to propose a solution.\n'
  }
  return out
}

/** The whole user message after a turn: the observation, the countdown, and the expert feedback. */
export function userMessage(turn: MintTurn): string {
  let out = observationText(turn)
  if (turn.feedback) out += `\nExpert feedback:\n${turn.feedback}\n`
  return out
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** The assistant message of a reply as the authors log it ("Assistant:\n" prefixed unless present). */
export function assistantMessage(reply: string): string {
  return `${reply.trimStart().startsWith('Assistant:') ? reply : `Assistant:\n${reply}`}\n`
}

/**
 * The episode's chat history as the released `state.history`: the instruction prompt, then per turn the
 * assistant reply and the user message (observation, countdown, feedback). The user message of a turn is
 * present once the turn is closed and the episode goes on (the authors never log the message of the turn
 * that ends the episode); with feedback it is complete once the feedback is in.
 */
export function chatHistory(state: MintState, instructionPrompt: string): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'user', content: instructionPrompt }]
  state.turns.forEach((t, i) => {
    if (t.reply) out.push({ role: 'assistant', content: assistantMessage(t.reply) })
    const isLast = i === state.turns.length - 1
    if (isLast && (state.finished || state.pending === 'execute' || state.pending === 'verdict')) return
    if (isLast && state.pending === 'feedback') return
    out.push({ role: 'user', content: userMessage(t) })
  })
  return out
}

/**
 * The authors' LMAgent.add_system_message: the first message split on "\n---\n" into a system part (the
 * instructions and tools) and a user part (the example and the task). Off by default, as in the released
 * runs: only the Bard and vLLM agents call it, and only with `add_system_message: true` in their config
 * (false in every listed config); the OpenAI agent that ran gpt-3.5-turbo-0613 sends `state.history` as
 * it is, one user message holding the whole instruction prompt, which is what the released history shows.
 */
export function addSystemMessage(messages: readonly ChatMessage[]): ChatMessage[] {
  const [first, ...rest] = messages
  if (first?.role !== 'user') throw new Error('The first message must be the user instruction prompt.')
  const parts = first.content.split('\n---\n')
  if (parts.length !== 3)
    throw new Error(`The instruction prompt splits into ${parts.length} parts on "\\n---\\n", not 3.`)
  return [
    { role: 'system', content: parts[0] as string },
    { role: 'user', content: `${parts[1]}\n---\n${parts[2]}` },
    ...rest,
  ]
}
