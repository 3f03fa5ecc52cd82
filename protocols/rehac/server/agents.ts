import { z } from 'zod'
import { type AgentContext, type ChatMessage, type Produced, restrictedTransport } from '@/lib/server/sdk'
import {
  type Decision,
  type DecisionRule,
  decideFromHttpResponse,
  decideFromP,
  decisionRule,
  httpRequestFor,
} from '@/protocols/rehac/core/deciders'
import { exactMatch, f1Score } from '@/protocols/rehac/core/metrics'
import { parseModel, pHuman } from '@/protocols/rehac/core/policy'
import {
  parseCollabReply,
  qaCollabPrompt,
  REACT_DECODING,
  reactStepPrompt,
  reactStop,
  sqlCollabPrompt,
  trajectoryForPrompt,
} from '@/protocols/rehac/core/prompts'
import type { RehacAction, RehacMessage, RehacState, Solver, rehac } from '@/protocols/rehac/core/protocol'
import {
  buildCorpus,
  MAX_ENV_CHARS,
  type QaCorpus,
  parsePagesJsonl,
  type QaEnvOptions,
  type QaState,
  type QaStep as QaStepResult,
  qaPage,
  qaStateAfter,
  stepQa,
} from '@/protocols/rehac/core/qa-env'
import { stateText } from '@/protocols/rehac/core/state-text'
import { renderAction } from '@/protocols/rehac/core/trajectory'
import type { PromptExamplesConfig, RehacSessionExtras } from '@/protocols/rehac/server/session'

/**
 * ReHAC's seats on the engine (pure where it can be; the SQL environment and the HTTP policy are the
 * only I/O besides the model calls). Every decider program is deterministic for (session, t) and records
 * what decided in the message's context.
 */
type Ctx = AgentContext<typeof rehac, RehacSessionExtras>
type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

// ───────────────────────────── the snapshot's environment data ─────────────────────────────

/**
 * What a session's instance snapshot carries for its environment beside the protocol's instance (which
 * strips unknown keys): the QA corpus pages of its task set, or the SQL file of its schema. Kept in the
 * snapshot so a session replays on what it ran on, whatever happens to the dataset later.
 */
export const rehacEnvData = z.object({
  pages: z.array(qaPage).max(20_000).optional(),
  schemaSql: z.string().max(MAX_ENV_CHARS).optional(),
})

const corpora = new Map<string, QaCorpus>()
/** The QA corpus of the session's task set (built once per process and task set). */
export function corpusOf(ctx: Pick<Ctx, 'session' | 'instance'>): QaCorpus {
  const key = `${ctx.session.runId ?? ctx.session.id}/${ctx.instance.taskSet ?? ''}`
  let c = corpora.get(key)
  if (!c) {
    const env = rehacEnvData.parse(ctx.session.instance)
    if (!env.pages?.length) throw new Error('the task has no corpus: import the questions with their corpus')
    c = buildCorpus(env.pages)
    if (corpora.size > 64) corpora.clear()
    corpora.set(key, c)
  }
  return c
}
export { parsePagesJsonl }

/** A QA action as the environment reads it (Search[x] …). */
export const actionText = (a: RehacAction) => renderAction(a)

/** The QA reward shown when an episode finishes: EM for QA, F1 for yes/no (as the released data shows). */
export function qaReward(kind: 'qa' | 'yesno' | 'sql', gold: string) {
  return (answer: string) =>
    kind === 'yesno' ? Math.round(f1Score(answer, gold) * 100) / 100 : exactMatch(answer, gold) ? 1 : 0
}

/** The SQL task set's schema name: content-addressed, so the same file is one schema. */
export function sqlSlug(schemaSql: string, fnv: (s: string) => number): string {
  return `t${fnv(schemaSql).toString(36)}`
}

// ───────────────────────────── deciders ─────────────────────────────

const seedParam = z.coerce.number().int().min(-2_147_483_648).max(2_147_483_647).default(0)
const RandomParams = z.object({ seed: seedParam, p: z.coerce.number().min(0).max(1).default(0.5) })
const PolicyParams = z.object({
  /** The trained model (policy.ts's JSON) in the seat's params: the run records exactly what decided. */
  model: z.unknown(),
  rule: decisionRule.default({ kind: 'argmax' }),
})
export const HttpPolicyParams = z.object({
  url: z.url(),
  rule: decisionRule.default({ kind: 'argmax' }),
  timeoutMs: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Set by the run's set-up: connect through the restricted-host guard (the URL's author may not reach internal hosts). */
  restrictedHosts: z.boolean().default(false),
})
const ScheduleParams = z.object({
  /** Who acts at steps 1…n: `a` the agent, `h` the human (e.g. "hah"). */
  solvers: z.string().regex(/^[ah]{1,32}$/, 'a string of a (agent) and h (human), at most 32 steps'),
  /** Who acts after the schedule's last step. */
  after: z.enum(['agent', 'human']).default('agent'),
})
const TreeParams = z.object({
  /** Forced decision: at step `at` the `solver` acts (a fork's own first step). */
  at: z.coerce.number().int().min(1).optional(),
  solver: z.enum(['agent', 'human']).optional(),
  /** Every other step: the random collection sampler p(human) = 0.5 with this seed. */
  seed: seedParam,
})

function params<T extends z.ZodType>(ctx: Ctx, schema: T): z.output<T> {
  const raw = ctx.fill.kind === 'program' ? ctx.fill.params : {}
  const r = schema.safeParse(raw)
  if (!r.success)
    throw new Error(`decider parameters: ${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}`)
  return r.data
}

/** The episode key of seeded draws: the session (its run and key), so a fork draws as its own episode. */
export const episodeKey = (ctx: Pick<Ctx, 'session'>) =>
  `${ctx.session.runId ?? ''}/${ctx.session.key || ctx.session.id}`

function decideMessage(ctx: Ctx, d: Decision, context: Record<string, unknown>): Produced<RehacMessage> {
  if (ctx.ask.kind !== 'decide') throw new Error(`the decider was asked for a ${ctx.ask.kind}`)
  return {
    message: {
      seq: ctx.ask.j,
      sender: 'decider',
      kind: 'decide',
      t: ctx.ask.t,
      solver: d.solver,
      pHuman: d.pHuman ?? null,
    },
    context,
  }
}

/** The branch a tree session was started for, from its key `<question>/<bits>[#n]` ('' for the root). */
export function branchOfKey(key: string): string {
  const m = /\/([01]*)(?:#\d+)?$/.exec(key)
  return m?.[1] ?? ''
}

export async function httpDecide(
  url: string,
  body: unknown,
  rule: DecisionRule,
  at: { episodeKey: string; t: number },
  timeoutMs: number,
  signal?: AbortSignal,
  transport: FetchLike = fetch,
): Promise<Decision> {
  const timeout = AbortSignal.timeout(timeoutMs)
  const res = await transport(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  })
  if (!res.ok) throw new Error(`policy service answered HTTP ${res.status}`)
  const text = await res.text()
  if (text.length > 10_000) throw new Error('policy service answer is longer than 10,000 characters')
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new Error('policy service answer is not JSON')
  }
  return decideFromHttpResponse(json, rule, at)
}

/** Each decider program's parameters, checked when a run is set up (a bad value is a 400 then, not a stalled step). */
const DECIDER_PARAMS: Record<string, z.ZodType> = {
  random: RandomParams,
  schedule: ScheduleParams,
  'trained-policy': PolicyParams,
  'http-policy': HttpPolicyParams,
  tree: TreeParams,
}

/** The first problem of a decider program's parameters, or null when they parse. */
export function deciderParamsProblem(program: string, raw: unknown): string | null {
  const schema = DECIDER_PARAMS[program]
  if (!schema) return null
  const r = schema.safeParse(raw ?? {})
  if (r.success) return null
  const issue = r.error.issues[0]
  return `${program}: ${issue?.path.join('.') || 'params'}: ${issue?.message}`
}

export const deciderPrograms: Record<string, (ctx: Ctx) => Promise<Produced<RehacMessage>>> = {
  async random(ctx) {
    const p = params(ctx, RandomParams)
    const key = episodeKey(ctx)
    const d = decideFromP(p.p, { kind: 'sample', seed: p.seed }, { episodeKey: key, t: ctx.ask.t })
    return decideMessage(ctx, d, { program: 'random', seed: p.seed, p: p.p, episodeKey: key })
  },
  async 'agent-only'(ctx) {
    return decideMessage(ctx, { solver: 'agent', pHuman: 0 }, { program: 'agent-only' })
  },
  async 'human-only'(ctx) {
    return decideMessage(ctx, { solver: 'human', pHuman: 1 }, { program: 'human-only' })
  },
  async schedule(ctx) {
    const p = params(ctx, ScheduleParams)
    const c = p.solvers[ctx.ask.t - 1]
    const solver: Solver = c === undefined ? p.after : c === 'h' ? 'human' : 'agent'
    return decideMessage(ctx, { solver, pHuman: solver === 'human' ? 1 : 0 }, { program: 'schedule', ...p })
  },
  async 'trained-policy'(ctx) {
    const p = params(ctx, PolicyParams)
    const model = parseModel(p.model)
    const state = stateText(ctx.state, true)
    const d = decideFromP(pHuman(model, state), p.rule, { episodeKey: episodeKey(ctx), t: ctx.ask.t })
    return decideMessage(ctx, d, { program: 'trained-policy', rule: p.rule, state })
  },
  async 'http-policy'(ctx) {
    const p = params(ctx, HttpPolicyParams)
    const state = stateText(ctx.state, true)
    const body = httpRequestFor({ state, t: ctx.ask.t, episodeKey: episodeKey(ctx) }, ctx.instance.question)
    const d = await httpDecide(
      p.url,
      body,
      p.rule,
      { episodeKey: episodeKey(ctx), t: ctx.ask.t },
      p.timeoutMs,
      ctx.signal,
      p.restrictedHosts ? restrictedTransport() : fetch,
    )
    return decideMessage(ctx, d, { program: 'http-policy', url: p.url, rule: p.rule, request: body })
  },
  async tree(ctx) {
    const p = params(ctx, TreeParams)
    const t = ctx.ask.t
    const branch = branchOfKey(ctx.session.key)
    let forced: Solver | null = null
    if (p.at !== undefined && p.solver) forced = p.at === t ? p.solver : null
    else if (t <= branch.length) forced = branch[t - 1] === '1' ? 'human' : 'agent'
    if (forced) return decideMessage(ctx, { solver: forced }, { program: 'tree', forced: true, branch, at: t })
    const key = episodeKey(ctx)
    const d = decideFromP(0.5, { kind: 'sample', seed: p.seed }, { episodeKey: key, t })
    return decideMessage(ctx, d, { program: 'tree', forced: false, seed: p.seed, episodeKey: key })
  },
}

// ───────────────────────────── the environment ─────────────────────────────

export type SqlRunner = (ctx: Ctx, action: RehacAction) => Promise<{ text: string; finished: boolean; reward?: number }>

/** The environment program's observation for the action due (QA here; SQL through `runSql`). */
export async function environment(ctx: Ctx, runSql: SqlRunner): Promise<Produced<RehacMessage>> {
  const ask = ctx.ask
  if (ask.kind !== 'observation') throw new Error(`the environment was asked for a ${ask.kind}`)
  const done = (text: string, finished: boolean, context: Record<string, unknown>): Produced<RehacMessage> => ({
    message: { seq: ask.j, sender: 'environment', kind: 'observation', t: ask.t, text, finished },
    context,
  })
  if (ctx.instance.kind === 'sql') {
    const r = await runSql(ctx, ask.action)
    return done(r.text, r.finished, { program: 'environment', kind: 'sql' })
  }
  const { state, step } = qaStep(ctx, ask.action, { reward: qaReward(ctx.instance.kind, ctx.instance.answer) })
  return done(step.observation, step.done, { program: 'environment', kind: 'qa', page: state.page })
}

/**
 * The QA environment's answer to `action` after the episode's answered steps (pure: the corpus state is
 * replayed from the log, nothing is written). The environment program's step, and the person's preview
 * of a Search or Lookup before they send it (server/operations.ts).
 */
export function qaStep(
  ctx: Pick<Ctx, 'session' | 'instance' | 'state'>,
  action: RehacAction,
  options: QaEnvOptions = {},
): { state: QaState; step: QaStepResult } {
  const corpus = corpusOf(ctx)
  const before = ctx.state.steps
    .filter((s) => s.observation !== null && s.action)
    .map((s) => actionText(s.action as RehacAction))
  const state = qaStateAfter(corpus, before, options)
  return { state, step: stepQa(corpus, state, actionText(action), options) }
}

// ───────────────────────────── the LLM seats ─────────────────────────────

/** The ReAct prompt's few-shot examples: none ship with Parley (the authors' `webthink_simple6` is not ours to copy). */
export const REACT_EXAMPLES = ''

const SQL_INSTRUCTION =
  'Solve the SQL task in steps. Each step write exactly one line "Action t: <one SQL statement>", or "Action t: submit" when the last statement answers the request. Each statement is run on the database and its result is the Observation.'

/** The system line of the human seat on an LLM (the offline demo model recognises it too). */
export const SIMULATED_HUMAN_LINE =
  'You simulate a careful human annotator who takes over this step from an AI agent. Write the step in exactly the same format.'

/** The chat of an acting seat (agent or simulated human) for step t. */
export function stepPrompt(state: RehacState, t: number, simulated: boolean): ChatMessage[] {
  const text = stateText(state)
  const prompt =
    state.instance.kind === 'sql'
      ? `${SQL_INSTRUCTION}\n${text.replace(/<solver> (agent|human)\n/g, '')}\nAction ${t}:`
      : reactStepPrompt({ examples: REACT_EXAMPLES, state: text, t })
  const messages: ChatMessage[] = []
  if (simulated) messages.push({ role: 'system', content: SIMULATED_HUMAN_LINE })
  messages.push({ role: 'user', content: prompt })
  return messages
}

/** The model request of step t: the step prompt, ReAct's decoding, and the stop before Observation t. */
export function stepRequest(state: RehacState, t: number, simulated: boolean) {
  const messages = stepPrompt(state, t, simulated)
  return { messages, request: { messages, ...REACT_DECODING, stop: [reactStop(t)] } }
}

/**
 * A model's reply for step t → the step message. QA: "[Thought t:] … \nAction t: Verb[arg]"; SQL:
 * "[Action t:] <statement>" or "submit". What does not read as a step becomes a message the protocol's
 * apply refuses (`invalid-message` / `invalid-action`), so it is never stored.
 */
export function parseStepReply(
  reply: string,
  kind: 'qa' | 'yesno' | 'sql',
  t: number,
): { thought: string | null; action: { type: string; arg: string } } {
  const text = reply.replace(/\r\n/g, '\n')
  if (kind === 'sql') {
    const body =
      text
        .replace(new RegExp(`^\\s*Action ${t}:\\s*`), '')
        .split(/\nObservation/)[0]
        ?.trim() ?? ''
    if (/^submit;?$/i.test(body)) return { thought: null, action: { type: 'submit', arg: '' } }
    return { thought: null, action: { type: body ? 'sql' : 'invalid', arg: body } }
  }
  const at = text.search(new RegExp(`(^|\\n)\\s*Action ${t}:`))
  if (at < 0) return { thought: text.trim() || null, action: { type: 'invalid', arg: text.trim() } }
  const thought = text
    .slice(0, at)
    .replace(new RegExp(`^\\s*Thought ${t}:`), '')
    .trim()
  const line = (
    text
      .slice(at)
      .replace(new RegExp(`^\\s*Action ${t}:`), '')
      .trim()
      .split('\n')[0] ?? ''
  ).trim()
  const m = /^(search|lookup|finish)\[([\s\S]*)\]$/i.exec(line)
  if (!m) return { thought: thought || null, action: { type: 'invalid', arg: line } }
  return { thought: thought || null, action: { type: (m[1] as string).toLowerCase(), arg: (m[2] as string).trim() } }
}

/**
 * The two finished trajectories the prompt policy shows (rehac.md A8: not in the paper). Parley's default is
 * these two, written by us about invented facts outside the demo sets (so no demo gold answer leaks);
 * the decision's context records `examples: 'parley-default'`.
 */
export const PROMPT_EXAMPLES = {
  qa: [
    'Question: Which city is the birthplace of the founder of the Harrow Glass Works?\n<solver> agent\nThought 1: I need to search the Harrow Glass Works and find its founder.\nAction 1: Search[Harrow Glass Works]\nObservation 1: The Harrow Glass Works was founded in 1821 by Ada Penrose.\n<solver> agent\nThought 2: The founder is Ada Penrose. I need her birthplace.\nAction 2: Search[Ada Penrose]\nObservation 2: Ada Penrose (1790–1862) was a glassmaker born in Wexley.\n<solver> agent\nThought 3: Ada Penrose was born in Wexley.\nAction 3: Finish[Wexley]\nObservation 3: Episode finished, reward = 1',
    "Question: How long is the canal that the Tamsin Aqueduct carries?\n<solver> agent\nThought 1: I need to search the Tamsin Aqueduct.\nAction 1: Search[Tamsin Aqueduct]\nObservation 1: Could not find Tamsin Aqueduct. Similar: ['The Tamsin Aqueduct'].\n<solver> human\nThought 2: The page title has the article.\nAction 2: Search[The Tamsin Aqueduct]\nObservation 2: The Tamsin Aqueduct carries the Orley Canal over the river Wend.\n<solver> agent\nThought 3: I need the length of the Orley Canal.\nAction 3: Search[Orley Canal]\nObservation 3: The Orley Canal is 46 kilometres long.\n<solver> agent\nThought 4: The canal is 46 kilometres long.\nAction 4: Finish[46 kilometres]\nObservation 4: Episode finished, reward = 1",
  ],
  sql: [
    'Question: How many orders are there?\n<solver> agent\nAction 1: SELECT count(*) FROM orders\nObservation 1: [(57,)]\n<solver> agent\nAction 2: submit\nObservation 2: Episode finished.',
    "Question: List the names of customers from Oslo.\n<solver> agent\nAction 1: SELECT * FROM customers\nObservation 1: relation \"customers\" does not exist\n<solver> human\nAction 2: SELECT name FROM customer WHERE city = 'Oslo'\nObservation 2: [('Kari Nordmann',)]\n<solver> agent\nAction 3: submit\nObservation 3: Episode finished.",
  ],
} as const

/**
 * The paper's prompt policy (Tables 5/6) for the decision of step t, with the run's examples (chosen
 * from the study's data when the run was set up, server/examples.ts) or else the built-in pair.
 */
export function collabPrompt(
  state: RehacState,
  chosen: PromptExamplesConfig | null = null,
): { prompt: string; examples: 'parley-default' | { source: 'study'; sessionIds: [string, string] } } {
  const study = chosen?.source === 'study' ? chosen : null
  const [example1, example2] = study
    ? [study.example1, study.example2]
    : state.instance.kind === 'sql'
      ? PROMPT_EXAMPLES.sql
      : PROMPT_EXAMPLES.qa
  const fields = { example1, example2, currentTrajectory: trajectoryForPrompt(stateText(state, true)) }
  return {
    prompt: state.instance.kind === 'sql' ? sqlCollabPrompt(fields) : qaCollabPrompt(fields),
    examples: study ? { source: 'study', sessionIds: study.sessionIds } : 'parley-default',
  }
}

/** Every LLM seat: the prompt policy (decider), the ReAct agent, the simulated human. */
export async function llmAgent(ctx: Ctx): Promise<Produced<RehacMessage>> {
  if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
  const ask = ctx.ask
  if (ask.kind === 'decide') {
    const { prompt, examples } = collabPrompt(ctx.state, ctx.extras.examples)
    const messages: ChatMessage[] = [{ role: 'user', content: prompt }]
    const r = await ctx.llm.ask(
      ctx.fill.model,
      { messages, temperature: 0, max_tokens: 10 },
      {
        parse: (text) => {
          const p = parseCollabReply(text, 'lenient')
          return p.ok ? { ok: true, value: p.solver } : { ok: false, error: p.reason }
        },
      },
      { purpose: 'rehac-decide', stream: ctx.watched },
    )
    return {
      message: { seq: ask.j, sender: 'decider', kind: 'decide', t: ask.t, solver: r.value, pHuman: null },
      context: { messages, examples },
      meta: { raw: r.text, prompt: 'paper-table' },
      callId: r.callId,
    }
  }
  if (ask.kind !== 'step') throw new Error(`an LLM was asked for a ${ask.kind}`)
  const simulated = ask.seat === 'human'
  const { messages, request } = stepRequest(ctx.state, ask.t, simulated)
  const r = await ctx.llm.chat(ctx.fill.model, request, {
    purpose: simulated ? 'rehac-simulated-human' : 'rehac-agent',
    stream: ctx.watched,
  })
  const parsed = parseStepReply(r.text, ctx.instance.kind, ask.t)
  // Built as the reply reads; the protocol's apply refuses a step that breaks the rules (never stored).
  const message = {
    seq: ask.j,
    sender: ask.seat,
    kind: 'step',
    t: ask.t,
    thought: ctx.instance.kind === 'sql' ? null : parsed.thought,
    action: parsed.action,
    suggestion: null,
    ms: null,
  } as unknown as RehacMessage
  return {
    message,
    context: messages,
    meta: { raw: r.text, ...(simulated ? { simulated: true } : {}) },
    callId: r.callId,
  }
}
