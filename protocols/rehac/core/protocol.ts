/**
 * ReHAC (seed 002, Feng et al., "Large Language Model-based Human-Agent Collaboration for Complex Task
 * Solving"; ../shared/reference/rehac.md) for one task q, as a pure protocol.
 *
 * Seats: `decider` chooses who acts at each step (a program: random, agent-only, human-only, the trained
 * or an HTTP policy; an LLM: the paper's prompt policy; or a person), `agent` (an LLM with the ReAct
 * prompt), `human` (a person in the browser, or an LLM that simulates one), `environment` (a program:
 * the offline corpus for QA, the read-only database for SQL).
 *
 *   for t = 1 … threshold:   decide (agent | human) → step by that seat (Thought + Action)
 *                            → observation by the environment (finished when the action ends the task)
 *
 * The episode ends with Finish[answer] (QA) or submit / a result equal to the gold query's (SQL), by
 * either solver, or after the threshold's step, force-finished with an empty answer as the authors'
 * code does. Every step keeps its solver, thought, action, observation, p(human) when a policy
 * decided, whether the person opened or copied the agent's suggestion, and the person's time.
 *
 * Decisions where the paper leaves a choice (rehac.md §7), binding for Parley:
 * - The decision of step t is its own message, so a trajectory tree forks at a decision (the engine's
 *   lineage: a fork starts from the parent's messages before it and decides the other way).
 * - Thresholds per task kind: QA 7, yes/no QA 5, SQL 8 (the authors' scripts); the run may set another.
 * - SQL has no Thought lines (as the released InterCode trajectories); its actions are a statement or
 *   `submit`, and the environment may end the episode when a result equals the gold query's (the
 *   released trajectories end there with `reward = 1`).
 * - The gold answer lives in the instance and never reaches a person or the acting model (the views
 *   and prompts leave it out); rewards are computed from the log when the episode has ended.
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError, type SeatDecl } from '../../../lib/protocols/types'
import { parseTrajectory } from './trajectory'

export const REHAC_PROTOCOL_ID = 'rehac'
export const REHAC_PROTOCOL_VERSION = '1'

export const TASK_KINDS = ['qa', 'yesno', 'sql'] as const
export type TaskKind = (typeof TASK_KINDS)[number]

/** The step threshold per task kind (the authors' scripts: HotpotQA 7, StrategyQA 5, InterCode 8). */
export const DEFAULT_THRESHOLD: Record<TaskKind, number> = { qa: 7, yesno: 5, sql: 8 }
export const MAX_THRESHOLD = 30

export const SOLVERS = ['agent', 'human'] as const
export type Solver = (typeof SOLVERS)[number]

/** The actions of each task kind (ReAct's Search / Lookup / Finish; a SQL statement or submit). */
export const ACTIONS: Record<TaskKind, readonly ActionType[]> = {
  qa: ['search', 'lookup', 'finish'],
  yesno: ['search', 'lookup', 'finish'],
  sql: ['sql', 'submit'],
}
export const ACTION_TYPES = ['search', 'lookup', 'finish', 'sql', 'submit'] as const
export type ActionType = (typeof ACTION_TYPES)[number]
/**
 * What a stored step's action may be: the actions above, and `invalid`, QA text that is none of them (a
 * truncated `Search[…`), which only a step recorded as written elsewhere (an imported trajectory) carries.
 */
export const STORED_ACTION_TYPES = [...ACTION_TYPES, 'invalid'] as const
export type StoredActionType = (typeof STORED_ACTION_TYPES)[number]

/** Limits of what a seat may write (a person's box, a model's reply, an observation). */
export const MAX_THOUGHT = 4_000
export const MAX_ARG = 4_000
/**
 * A stored action's argument: what a seat writes is at most MAX_ARG (the turn form, the model's reply), but
 * a released trajectory holds longer statements (an InterCode action of 7,060 characters), kept as they are.
 */
export const MAX_STORED_ARG = 20_000
export const MAX_OBSERVATION = 20_000

export const rehacConfig = z.strictObject({
  /** Steps at most; absent: the task kind's default. */
  threshold: z.number().int().min(1).max(MAX_THRESHOLD).optional(),
})
export type RehacConfig = z.output<typeof rehacConfig>

export const rehacInstance = z.object({
  /** The question's id in its set (the authors' `idx`). */
  id: z.string().min(1).max(200),
  kind: z.enum(TASK_KINDS),
  question: z.string().min(1).max(20_000),
  /** The gold answer (QA), or the gold query (SQL). Never shown to a person or the acting model. */
  answer: z.string().max(20_000),
  /** Text before the question in the trajectory (InterCode's game instructions). */
  preamble: z.string().max(20_000).optional(),
  /** The corpus (QA) or the database schema (SQL) the environment reads, by name. */
  taskSet: z.string().min(1).max(200).optional(),
})
export type RehacInstance = z.output<typeof rehacInstance>

export const rehacSeat = z.enum(['decider', 'agent', 'human', 'environment'])
export type RehacSeat = z.infer<typeof rehacSeat>

export const REHAC_SEATS = [
  {
    name: 'decider',
    label: 'Decider (who acts)',
    kinds: ['program', 'llm', 'human'],
    programs: ['random', 'agent-only', 'human-only', 'schedule', 'trained-policy', 'http-policy', 'tree'],
    description:
      'Chooses before each step whether the agent or the human acts: a program (random with p(human) = 0.5 and a recorded seed, agent-only, human-only, a policy trained in Parley, a policy served over HTTP), the paper’s prompt policy on an LLM, or a person.',
  },
  {
    name: 'agent',
    label: 'Agent',
    kinds: ['llm'],
    description:
      'The ReAct agent: writes Thought and Action (temperature 0, at most 100 tokens, stops at the next Observation).',
  },
  {
    name: 'human',
    label: 'Human',
    kinds: ['human', 'llm'],
    description:
      'A person in the browser, or an LLM that simulates one (as the paper did with GPT-4; marked “simulated” everywhere).',
  },
  {
    name: 'environment',
    label: 'Environment',
    kinds: ['program'],
    programs: ['environment'],
    description:
      'Returns the Observation: the offline corpus for QA (Search, Lookup, Finish), the read-only database for SQL.',
  },
] as const satisfies readonly SeatDecl[]

const seq = z.number().int().min(1)
const stepNumber = z.number().int().min(1).max(MAX_THRESHOLD)

const decideMessage = z.object({
  seq,
  sender: z.literal('decider'),
  kind: z.literal('decide'),
  t: stepNumber,
  solver: z.enum(SOLVERS),
  /** p(human) the policy gave, when a policy decided (null: none, e.g. agent-only or a person). */
  pHuman: z.number().min(0).max(1).nullable().default(null),
})

export const rehacAction = z.object({
  type: z.enum(STORED_ACTION_TYPES),
  /** The bracketed argument (Search[…]), or the SQL statement; empty for submit. */
  arg: z.string().max(MAX_STORED_ARG),
})
export type RehacAction = z.output<typeof rehacAction>

const stepMessage = z.object({
  seq,
  sender: z.enum(SOLVERS),
  kind: z.literal('step'),
  t: stepNumber,
  /** The Thought (none for SQL). */
  thought: z.string().max(MAX_THOUGHT).nullable().default(null),
  action: rehacAction,
  /** A person's step: whether they opened ("opened") or copied ("copied") the agent's suggestion. */
  suggestion: z.enum(['opened', 'copied']).nullable().default(null),
  /** A person's step: milliseconds from the step's first showing to its sending. */
  ms: z.number().int().min(0).nullable().default(null),
  /**
   * An imported step: its Thought and Action lines exactly as the file wrote them (after the marker line),
   * so the trajectory renders byte for byte; must read back as this step's thought and action.
   */
  written: z
    .string()
    .max(MAX_THOUGHT + MAX_STORED_ARG + 1_000)
    .optional(),
})

const observeMessage = z.object({
  seq,
  sender: z.literal('environment'),
  kind: z.literal('observation'),
  t: stepNumber,
  text: z.string().max(MAX_OBSERVATION),
  /** The episode ends with this observation (Finish, submit, or SQL whose result is the gold one). */
  finished: z.boolean().default(false),
  /**
   * An imported step: its Observation line exactly as the file wrote it, with the blank lines after it
   * (and, after the last step, the file's epilogue such as InterCode's "reward = 1").
   */
  written: z
    .string()
    .max(MAX_OBSERVATION + 1_000)
    .optional(),
})

export const rehacMessage = z.discriminatedUnion('kind', [decideMessage, stepMessage, observeMessage])
export type RehacMessage = z.output<typeof rehacMessage>
export type DecideMessage = z.output<typeof decideMessage>
export type StepMessage = z.output<typeof stepMessage>
export type ObserveMessage = z.output<typeof observeMessage>

export type RehacAskKind = 'decide' | 'step' | 'observation'
export type RehacAsk = Ask<RehacSeat, string, RehacAskKind> &
  (
    | { seat: 'decider'; kind: 'decide'; t: number }
    | { seat: Solver; kind: 'step'; t: number }
    | { seat: 'environment'; kind: 'observation'; t: number; action: RehacAction }
  )

export type RehacDoneReason = 'finished' | 'threshold'
export type RehacDone = Done<RehacDoneReason>
export const DONE_REASONS: Record<RehacDoneReason, string> = {
  finished: 'a solver finished the task',
  threshold: 'the step threshold was reached (force-finished with an empty answer)',
}

export type RehacErrorCode =
  | 'invalid-config'
  | 'invalid-instance'
  | 'invalid-message'
  | 'session-over'
  | 'wrong-seq'
  | 'out-of-turn'
  | 'wrong-step'
  | 'invalid-action'

export class RehacError extends ProtocolError<RehacErrorCode> {
  constructor(code: RehacErrorCode, message: string) {
    super(REHAC_PROTOCOL_ID, code, message)
    this.name = 'RehacError'
  }
}

/** One step of the episode as far as it got. */
export interface RehacStep {
  t: number
  solver: Solver
  pHuman: number | null
  thought: string | null
  action: RehacAction | null
  suggestion: 'opened' | 'copied' | null
  ms: number | null
  observation: string | null
  finished: boolean
  /** An imported step: its Thought/Action lines and its Observation lines as the file wrote them. */
  written?: string
  writtenObservation?: string
}

export interface RehacState {
  config: RehacConfig
  instance: RehacInstance
  threshold: number
  /** Every message so far, in order. */
  messages: RehacMessage[]
  steps: RehacStep[]
  /** The final answer (Finish's argument, the submitted or matching statement; '' when force-finished). */
  answer: string | null
  reason: RehacDoneReason | null
}

export function thresholdOf(config: RehacConfig, instance: Pick<RehacInstance, 'kind'>): number {
  return config.threshold ?? DEFAULT_THRESHOLD[instance.kind]
}

function init(config: RehacConfig, instance: RehacInstance): RehacState {
  const c = rehacConfig.safeParse(config)
  if (!c.success) throw new RehacError('invalid-config', `Invalid ReHAC config: ${c.error.issues[0]?.message}`)
  const i = rehacInstance.safeParse(instance)
  if (!i.success) throw new RehacError('invalid-instance', `Invalid ReHAC task: ${i.error.issues[0]?.message}`)
  return {
    config: c.data,
    instance: i.data,
    threshold: thresholdOf(c.data, i.data),
    messages: [],
    steps: [],
    answer: null,
    reason: null,
  }
}

function next(state: RehacState): RehacAsk | RehacDone {
  if (state.reason) return { done: true, reason: state.reason }
  const j = state.messages.length + 1
  const last = state.steps.at(-1)
  if (!last || last.observation !== null)
    return { done: false, seat: 'decider', kind: 'decide', j, t: state.steps.length + 1 }
  if (!last.action) return { done: false, seat: last.solver, kind: 'step', j, t: last.t }
  return { done: false, seat: 'environment', kind: 'observation', j, t: last.t, action: last.action }
}

/** Whether the action ends the episode by itself (Finish, submit). */
export const endsEpisode = (a: RehacAction) => a.type === 'finish' || a.type === 'submit'

function apply(state: RehacState, input: RehacMessage): RehacState {
  const parsed = rehacMessage.safeParse(input)
  if (!parsed.success) {
    const i = parsed.error.issues[0]
    throw new RehacError('invalid-message', `Invalid message: ${i?.path.join('.') || 'message'}: ${i?.message}`)
  }
  const msg = parsed.data
  const ask = next(state)
  if (ask.done) throw new RehacError('session-over', `The episode is over (${DONE_REASONS[ask.reason]}).`)
  if (msg.seq !== ask.j) throw new RehacError('wrong-seq', `Message ${msg.seq} arrived where message ${ask.j} was due.`)
  if (msg.sender !== ask.seat || msg.kind !== ask.kind)
    throw new RehacError(
      'out-of-turn',
      `Message ${msg.seq}: it is the ${ask.seat}'s turn (${ask.kind}), not a ${msg.kind} from the ${msg.sender}.`,
    )
  if (msg.t !== ask.t)
    throw new RehacError('wrong-step', `Message ${msg.seq} is for step ${msg.t}; step ${ask.t} is due.`)
  const steps = state.steps.slice()
  const messages = [...state.messages, msg]
  if (msg.kind === 'decide') {
    steps.push({
      t: msg.t,
      solver: msg.solver,
      pHuman: msg.pHuman,
      thought: null,
      action: null,
      suggestion: null,
      ms: null,
      observation: null,
      finished: false,
    })
    return { ...state, messages, steps }
  }
  const last = steps.at(-1) as RehacStep
  if (msg.kind === 'step') {
    const kind = state.instance.kind
    const type = msg.action.type
    if (type === 'invalid' && (kind === 'sql' || msg.written === undefined))
      throw new RehacError(
        'invalid-message',
        `Invalid message: action.type: step ${msg.t}'s action is none of ${ACTIONS[kind].join(', ')} (only an imported QA step, recorded as written, may be invalid).`,
      )
    if (type !== 'invalid' && !ACTIONS[kind].includes(type))
      throw new RehacError(
        'invalid-action',
        `Step ${msg.t}: a ${kind === 'sql' ? 'SQL' : 'QA'} task takes ${ACTIONS[kind].join(', ')}, not ${msg.action.type}.`,
      )
    const arg = msg.action.arg.trim()
    if (msg.action.type !== 'submit' && msg.action.type !== 'finish' && !arg)
      throw new RehacError('invalid-action', `Step ${msg.t}: ${msg.action.type} needs an argument.`)
    if (kind === 'sql' && msg.thought !== null && msg.thought !== '')
      throw new RehacError('invalid-action', `Step ${msg.t}: a SQL step has no Thought.`)
    if (msg.sender !== 'human' && (msg.suggestion !== null || msg.ms !== null))
      throw new RehacError('invalid-message', `Step ${msg.t}: only a person's step records a suggestion or a time.`)
    if (msg.written !== undefined) checkWrittenStep(msg, kind === 'sql' ? 'sql' : 'qa')
    steps[steps.length - 1] = {
      ...last,
      thought: msg.thought,
      action: msg.action,
      suggestion: msg.suggestion,
      ms: msg.ms,
      ...(msg.written !== undefined ? { written: msg.written } : {}),
    }
    return { ...state, messages, steps }
  }
  const action = last.action as RehacAction
  if (endsEpisode(action) && !msg.finished)
    throw new RehacError(
      'invalid-message',
      `Step ${msg.t}: ${action.type} ends the episode; its observation must say so.`,
    )
  if (msg.finished && !endsEpisode(action) && action.type !== 'sql')
    throw new RehacError('invalid-message', `Step ${msg.t}: a ${action.type} does not end the episode.`)
  if (msg.written !== undefined) {
    const m = WRITTEN_OBSERVATION.exec(msg.written)
    const rest =
      m && msg.written.startsWith(msg.text, m[0].length) ? msg.written.slice(m[0].length + msg.text.length) : null
    if (rest === null || !/^(\n*|\n+reward = [\s\S]*)$/.test(rest))
      throw new RehacError(
        'invalid-message',
        `Step ${msg.t}: the observation as written is not "Observation n: " and this observation's text.`,
      )
    if (last.written === undefined)
      throw new RehacError('invalid-message', `Step ${msg.t}: only an imported step has its observation as written.`)
  }
  steps[steps.length - 1] = {
    ...last,
    observation: msg.text,
    finished: msg.finished,
    ...(msg.written !== undefined ? { writtenObservation: msg.written } : {}),
  }
  let answer: string | null = null
  let reason: RehacDoneReason | null = null
  if (msg.finished) {
    reason = 'finished'
    answer = action.type === 'submit' ? lastStatement(steps) : action.arg
  } else if (msg.t >= state.threshold) {
    reason = 'threshold'
    answer = ''
  }
  return { ...state, messages, steps, answer, reason }
}

const WRITTEN_OBSERVATION = /^Observation [1-9]\d*: /

/** An imported step's lines as written must read back as its thought and action (trajectory.ts's reading). */
function checkWrittenStep(msg: StepMessage, kind: 'qa' | 'sql'): void {
  let ok = false
  try {
    const t = parseTrajectory(`Question: -\n<solver> ${msg.sender}\n${msg.written}\nObservation ${msg.t}: -`, kind)
    const s = t.steps[0]
    ok =
      t.steps.length === 1 &&
      s !== undefined &&
      s.thought === msg.thought &&
      s.action.type === msg.action.type &&
      s.action.arg === msg.action.arg
  } catch {
    ok = false
  }
  if (!ok)
    throw new RehacError(
      'invalid-message',
      `Step ${msg.t}: the lines as written do not read as this step's thought and action.`,
    )
}

/** The statement a submit hands in: the last SQL the episode ran ('' when none). */
function lastStatement(steps: readonly RehacStep[]): string {
  for (let i = steps.length - 1; i >= 0; i--) {
    const a = steps[i]?.action
    if (a?.type === 'sql') return a.arg
  }
  return ''
}

/** The choice path of the steps so far: one bit per decided step, '0' agent, '1' human (the tree's key). */
export function choicePath(state: Pick<RehacState, 'steps'>): string {
  return state.steps.map((s) => (s.solver === 'human' ? '1' : '0')).join('')
}

/** Human steps C and all steps of the episode (the whole trajectory, as the paper counts C). */
export function stepCounts(state: Pick<RehacState, 'steps'>): { human: number; steps: number } {
  const done = state.steps.filter((s) => s.action !== null)
  return { human: done.filter((s) => s.solver === 'human').length, steps: done.length }
}

export const rehac: Protocol<RehacConfig, RehacState, RehacMessage, RehacInstance, RehacAsk, RehacDone> = {
  id: REHAC_PROTOCOL_ID,
  version: REHAC_PROTOCOL_VERSION,
  label: 'ReHAC collaboration',
  config: rehacConfig,
  message: rehacMessage,
  instance: rehacInstance,
  seats: REHAC_SEATS,
  init,
  next,
  apply,
}
