import { readFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { contentText } from '@/lib/llm/text'
import { DEMO_LABEL, type DemoRequest } from '@/lib/llm/demo-model'
import { ProtocolError } from '@/lib/protocols/types'
import { badRequest, definePlugin, type HumanContext, type Produced } from '@/lib/server/sdk'
import { ACTION_TYPES, MAX_ARG, MAX_THOUGHT, type RehacMessage, rehac } from '@/protocols/rehac/core/protocol'
import { REACT_INSTRUCTION } from '@/protocols/rehac/core/prompts'
import { branchKey, coverage, coverageForks, type TreeEpisode } from '@/protocols/rehac/core/tree'
import {
  branchOfKey,
  deciderPrograms,
  environment,
  llmAgent,
  SIMULATED_HUMAN_LINE,
  type SqlRunner,
} from '@/protocols/rehac/server/agents'
import { type RehacSessionExtras, refusedStep, sessionConfig, sqlEnvOf } from '@/protocols/rehac/server/session'

export { RehacExtras, RehacStoredConfig } from '@/protocols/rehac/server/session'

/**
 * ReHAC (seed 002) on the engine: a decider seat chooses agent or human before each step, the chosen seat
 * writes Thought + Action, the environment program answers the Observation (protocols/rehac/core/protocol.ts).
 * This entry holds what a worker needs to step an episode; set-up, views, exports, import and the demo seed
 * are modules loaded on first use. The SQL environment (server/sql-env.ts) is loaded on its first SQL step.
 *
 * Decider programs (seat params in brackets, all recorded in the decision's context):
 * - `random` {seed = 0, p = 0.5}: human iff u(seed, run/session key, t) < p (deciders.ts), so a replay or
 *   a retried step decides the same.
 * - `agent-only`, `human-only`.
 * - `schedule` {solvers: "hah", after = agent}: a fixed plan of who acts at steps 1…n (h human, a agent),
 *   then `after`; for tutorials, demonstrations and tests that need a known order of turns.
 * - `trained-policy` {model, rule = argmax}: the model JSON of policy.ts in the seat's params (the run's
 *   seats are its record of exactly which policy decided; a stored-policy table is not built yet).
 * - `http-policy` {url, rule = argmax, timeoutMs = 5000}: POSTs `{state, t, question}` and reads
 *   `{pHuman}` (deciders.ts's contract); a non-2xx, a timeout or a malformed answer stalls the step.
 * - `tree` {at?, solver?, seed = 0}: the collection decider. With {at, solver} it forces that step (as
 *   tests/engine/toy-fork does); without, a tree fork's key `<instance>/<bits>` forces the steps of its
 *   branch; every other step is the random sampler p(human) = 0.5 (π_beh of the paper's collection).
 */

const runSql: SqlRunner = async (ctx, action) => {
  const { env, slug } = await sqlEnvOf(ctx.session.instance)
  if (action.type === 'submit') {
    // InterCode's submit: the reward (IoU) of the last statement the episode ran, shown as it ends.
    const last = ctx.state.steps.findLast((s) => s.action?.type === 'sql' && s.observation !== null)?.action?.arg
    const reward = last ? (await env.sqlReward(slug, last, ctx.instance.answer)).reward : 0
    return { text: `Episode finished, reward = ${Math.round(reward * 10_000) / 10_000}`, finished: true, reward }
  }
  const r = await env.sqlReward(slug, action.arg, ctx.instance.answer)
  const text = env.sqlObservation(r.run)
  // The released InterCode trajectories end where a result equals the gold query's (reward = 1).
  return { text, finished: r.run.ok && r.reward === 1, reward: r.reward }
}

// ───────────────────────────── a person's turn ─────────────────────────────

const text = (max: number, what: string) =>
  z.string({ error: `${what} must be text.` }).max(max, `${what} is too long.`)

/**
 * A person's turn. Deciding (a person in the decider seat): `{solver: 'agent' | 'human'}`. A step:
 * `{thought?, action: {type, arg}, suggestion?: 'opened' | 'copied' | null, ms?}`; `type` is search,
 * lookup or finish (QA) or sql or submit (SQL), `arg` the bracketed argument or the statement.
 */
export const RehacTurnInput = z.object({
  solver: z.enum(['agent', 'human'], { error: 'Choose who acts: agent or human.' }).optional(),
  thought: text(MAX_THOUGHT, 'The Thought').optional(),
  action: z
    .object({
      type: z.enum(ACTION_TYPES, { error: 'Choose an action.' }),
      arg: text(MAX_ARG, 'The argument').default(''),
    })
    .optional(),
  suggestion: z.enum(['opened', 'copied']).nullable().optional(),
  ms: z.coerce.number().int().min(0).max(86_400_000).optional(),
})
export type RehacTurnInput = z.output<typeof RehacTurnInput>

/** The turn form's fields: solver, thought, actionType, actionArg, suggestion, ms. */
export function rehacTurnFromForm(f: Record<string, unknown>): unknown {
  const s = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
  const type = s(f.actionType)
  return {
    solver: s(f.solver),
    thought: s(f.thought),
    action: type ? { type, arg: typeof f.actionArg === 'string' ? f.actionArg : '' } : undefined,
    suggestion: s(f.suggestion) ?? null,
    ms: s(f.ms),
  }
}

function turnMessage(ctx: HumanContext<typeof rehac>, input: RehacTurnInput): Produced<RehacMessage> {
  const ask = ctx.ask
  let message: RehacMessage
  if (ask.kind === 'decide') {
    if (!input.solver) throw badRequest('Choose who acts: agent or human.', { solver: ['Choose agent or human.'] })
    message = { seq: ask.j, sender: 'decider', kind: 'decide', t: ask.t, solver: input.solver, pHuman: null }
  } else if (ask.kind === 'step') {
    if (!input.action) throw badRequest('Choose an action.', { 'action.type': ['Choose an action.'] })
    const sql = ctx.instance.kind === 'sql'
    const thought = input.thought?.trim() ? input.thought.trim() : null
    if (sql && thought) throw badRequest('A SQL step has no Thought.', { thought: ['A SQL step has no Thought.'] })
    if (!sql && !thought)
      throw badRequest('Write a Thought before the action.', { thought: ['Write a Thought before the action.'] })
    message = {
      seq: ask.j,
      sender: ask.seat,
      kind: 'step',
      t: ask.t,
      thought,
      action: { type: input.action.type, arg: input.action.arg.trim() },
      suggestion: input.suggestion ?? null,
      ms: input.ms ?? null,
    }
  } else throw badRequest('It is not a person’s turn.')
  try {
    rehac.apply(ctx.state, message)
  } catch (err) {
    if (err instanceof ProtocolError) throw refusedStep(err)
    throw err
  }
  return { message, meta: { audit: { kind: ask.kind, t: ask.t } } }
}

// ───────────────────────────── the offline demo model ─────────────────────────────

let demoAnswers: Array<{ question: string; answer: string }> | undefined

/**
 * The demo sets' questions and their answers (protocols/rehac/demo, written by us), read once from the
 * checkout: what the demo model knows when it simulates an annotator. A yes/no answer (true/false in the
 * file) is given as yes/no, as a person writes it. Longest question first, so a question that contains
 * another is matched first.
 */
function demoAnswerList(): Array<{ question: string; answer: string }> {
  if (demoAnswers) return demoAnswers
  const list: Array<{ question: string; answer: string }> = []
  const read = (name: string) => {
    try {
      return readFileSync(path.join(process.cwd(), 'protocols/rehac/demo', name), 'utf8')
    } catch {
      return ''
    }
  }
  for (const line of read('questions.jsonl').split('\n')) {
    if (!line.trim()) continue
    const q = JSON.parse(line) as { question: string; answer: string; type: string }
    const answer = q.type === 'yesno' ? (q.answer === 'true' ? 'yes' : 'no') : q.answer
    list.push({ question: q.question, answer })
  }
  for (const line of read('sql-tasks.jsonl').split('\n')) {
    if (!line.trim()) continue
    const q = JSON.parse(line) as { request: string; gold: string }
    list.push({ question: q.request, answer: q.gold })
  }
  demoAnswers = list.sort((a, b) => b.question.length - a.question.length)
  return demoAnswers
}

/** The demo answer of the demo question the prompt asks (undefined for any other question). */
export function demoAnswerOf(prompt: string): string | undefined {
  const q = /(?:^|\n)Question: (.*)/.exec(prompt)?.[1]?.trim()
  return demoAnswerList().find((d) => (q ? q === d.question : prompt.includes(d.question)))?.answer
}

/**
 * The demo model's ReAct steps: at step 1 it searches the question's first proper name, then finishes
 * with the start of the last observation; SQL: one statement, then submit; the prompt policy says
 * [ChatGPT]. Labelled as the demo model in every Thought. As the simulated human (the system line of
 * `stepPrompt`) on a demo question it finishes at once with the demo answer (yes/no for a yes/no
 * question; SQL: the gold statement, which ends the episode), so a demo collection has a correct human
 * branch beside the agent's; on any other question it plays as the agent does.
 */
export function rehacDemo(req: DemoRequest): string | undefined {
  const prompt = req.messages.map((m) => contentText(m.content)).join('\n')
  if (prompt.includes('Imagine you are a clever planner')) return '[ChatGPT]'
  const sql = prompt.startsWith('Solve the SQL task in steps.') || prompt.includes('\nSolve the SQL task in steps.')
  if (!prompt.includes(REACT_INSTRUCTION) && !sql) return undefined
  const t = Number(/(?:Thought|Action) (\d+):\s*$/.exec(prompt)?.[1] ?? '1')
  const label = DEMO_LABEL.replace(/[[\]]/g, '')
  if (prompt.includes(SIMULATED_HUMAN_LINE)) {
    const known = demoAnswerOf(prompt)
    if (known !== undefined)
      return sql
        ? known
        : ` ${label}, as a simulated annotator: the demo pages answer this.\nAction ${t}: Finish[${known}]`
  }
  if (sql) return t === 1 ? 'SELECT 1' : 'submit'
  if (t === 1) {
    const q = /Question: (.*)/.exec(prompt)?.[1] ?? ''
    const entity = /(?:^|\s)((?:The\s)?[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*)/.exec(q.replace(/^\S+\s/, ''))?.[1] ?? q
    return ` ${label}: I search the question's first name.\nAction 1: Search[${entity.trim()}]`
  }
  const last = [...prompt.matchAll(/Observation \d+: (.*)/g)].at(-1)?.[1] ?? ''
  const guess = last.split(/\s+/).slice(0, 3).join(' ').replace(/[[\]]/g, '')
  return ` ${label}: I answer from what I read.\nAction ${t}: Finish[${guess}]`
}

// ───────────────────────────── the plugin ─────────────────────────────

export const rehacPlugin = definePlugin<typeof rehac, RehacSessionExtras>(rehac, {
  sessionConfig,
  agents: {
    llm: llmAgent,
    program: {
      ...deciderPrograms,
      environment: (ctx) => environment(ctx, runSql),
    },
  },
  timeouts: { program: { 'http-policy': 30, environment: 30 } },
  human: { input: RehacTurnInput, toMessage: turnMessage, fromForm: rehacTurnFromForm },
  project: (m: RehacMessage) =>
    m.kind === 'decide'
      ? { receiver: m.solver, label: 'decide', value: m.solver }
      : m.kind === 'step'
        ? {
            receiver: 'environment',
            label: m.action.type,
            value: m.action.arg.slice(0, 500),
            detail: m.thought?.slice(0, 4000) ?? null,
          }
        : { receiver: 'decider', label: m.finished ? 'finished' : 'observation', detail: m.text.slice(0, 4000) },
  projectionNames: { label: 'kind', value: 'choice', detail: 'text' },
  schedule: {
    watches: (config) => !!config.extras.tree,
    async onSessionDone(ctx) {
      if (!ctx.run.config.extras.tree) return {}
      const ended = ctx.session
      const question = ended.instanceId ?? ended.key
      const all = (await ctx.sessions()).filter((s) => (s.instanceId ?? s.key) === question)
      const episodes: Array<TreeEpisode & { id: string }> = []
      for (const s of all) {
        const messages = await ctx.messages(s.id)
        const path = messages
          .filter((m) => m.kind === 'decide')
          .map((m) => (m.kind === 'decide' && m.solver === 'human' ? '1' : '0'))
          .join('')
        episodes.push({ id: s.id, branch: branchOfKey(s.key), path, done: s.status === 'done' })
      }
      const me = episodes.find((e) => e.id === ended.id)
      if (!me) return {}
      const forks = coverageForks(me, episodes, ctx.run.config.extras.humanSamples)
      const create = forks.map((f) => ({
        key: branchKey(question, f.branch, f.sample),
        parentId: ended.id,
        forkSeq: f.forkSeq,
      }))
      const cov = coverage(episodes.filter((e) => e.done).map((e) => e.path))
      return { create, progress: { done: cov.covered, total: Math.max(cov.states, 1) } }
    },
  },
  setup: () =>
    import('@/protocols/rehac/server/setup').then((m) => ({
      options: m.RehacRunOptions,
      plan: m.planRehac,
      fromForm: m.rehacSetupFromForm,
      snapshot: m.rehacSnapshot,
    })),
  views: () =>
    Promise.all([
      import('@/protocols/rehac/server/views'),
      import('@/protocols/rehac/server/methods'),
      import('@/protocols/rehac/server/transcript'),
    ]).then(([m, pages, t]) => ({
      session: m.rehacSessionView,
      transcript: t.rehacTranscript,
      run: m.rehacRunView,
      studyPage: pages.rehacStudyPage,
      studyPanel: pages.rehacStudyPanel,
    })),
  exports: () => import('@/protocols/rehac/server/views').then((m) => ({ tables: m.rehacExports })),
  seed: () => import('@/protocols/rehac/server/seed').then((m) => ({ seedDemo: m.seedRehacDemo })),
  ops: async () => {
    const [{ rehacDatasets }, { previewRehacStep, suggestRehacStep }, train, { rehacSessionImports }] =
      await Promise.all([
        import('@/protocols/rehac/server/datasets'),
        import('@/protocols/rehac/server/operations'),
        import('@/protocols/rehac/server/train'),
        import('@/protocols/rehac/server/import'),
      ])
    return {
      datasets: rehacDatasets,
      sessionImports: rehacSessionImports,
      operations: [previewRehacStep, suggestRehacStep, train.trainRehacPolicy],
      rest: train.rehacRest,
    }
  },
  demo: rehacDemo,
  title: (instance) => `${instance.kind === 'sql' ? 'SQL' : 'QA'} ${instance.id}: ${instance.question.slice(0, 60)}`,
})
