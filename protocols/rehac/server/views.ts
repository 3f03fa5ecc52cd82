import { z } from 'zod'
import {
  db,
  type ExportTable,
  pageInput,
  pageOf,
  replayCache,
  type StoredSession,
  type ViewContext,
} from '@/lib/server/sdk'
import { exactMatch, f1Score, rehacReward } from '@/protocols/rehac/core/metrics'
import {
  ACTIONS,
  type ActionType,
  type RehacDoneReason,
  type RehacState,
  type RehacStep,
  type rehac,
  stepCounts,
  choicePath,
} from '@/protocols/rehac/core/protocol'
import { trajectoryText } from '@/protocols/rehac/core/state-text'
import { rehacDataTables } from '@/protocols/rehac/server/exports'
import { type ImportedReward, PromptExamplesConfig, replayStored } from '@/protocols/rehac/server/session'

/** λ of the run page (the paper's headline value); the exports and the CLI take any λ. */
export const DEFAULT_LAMBDA = 0.08

export interface RehacResult {
  /** The final answer (QA) or the submitted / matching statement (SQL); '' when force-finished. */
  answer: string
  /** T: token F1 (QA), IoU of the rows (SQL). */
  T: number
  /** Exact match (QA); for SQL, T = 1. */
  em: boolean
  f1: number
  /** C: human steps of the whole trajectory. */
  humanSteps: number
  steps: number
  /** R = T − λ·C at λ = 0.08. */
  R: number
  reason: RehacDoneReason
}

const REWARD = /reward = ([0-9.]+)\s*$/

/** T, EM, C and R of an ended episode (null while it runs). SQL's T is what its last observation showed. */
export function resultOf(
  state: RehacState,
  lambda = DEFAULT_LAMBDA,
  imported: ImportedReward | null = null,
): RehacResult | null {
  if (!state.reason) return null
  const answer = state.answer ?? ''
  const gold = state.instance.answer
  let T: number
  let em: boolean
  if (imported) {
    // An imported episode keeps the reward its file gave (no gold answer came with it).
    T = imported.T
    em = imported.em
  } else if (state.instance.kind === 'sql') {
    const last = state.steps.at(-1)
    const shown = last?.observation ? REWARD.exec(last.observation) : null
    T =
      state.reason === 'threshold'
        ? 0
        : last?.action?.type === 'sql'
          ? 1
          : shown
            ? Math.min(1, Math.max(0, Number(shown[1])))
            : 0
    em = T === 1
  } else {
    T = f1Score(answer, gold)
    em = exactMatch(answer, gold)
  }
  const c = stepCounts(state)
  return {
    answer,
    T,
    em,
    f1: T,
    humanSteps: c.human,
    steps: c.steps,
    R: rehacReward(T, c.human, lambda),
    reason: state.reason,
  }
}

/** One step as the session page shows it. */
export type RehacStepView = RehacStep

/** What the session page gets (participants never see the gold answer, nor a reward before the end). */
export interface RehacSessionView {
  task: {
    id: string
    kind: 'qa' | 'yesno' | 'sql'
    question: string
    preamble: string | null
    taskSet: string | null
    /** SQL: the schema's SQL file (the tables a person writes statements against); null for QA. */
    schema: string | null
  }
  threshold: number
  /** The step being played (decided, written or observed), or the last one when the episode ended. */
  t: number
  /** What is due: a decision, a step (by whom) or an observation; null once ended. */
  due: { kind: 'decide' | 'step' | 'observation'; seat: string; t: number } | null
  /** The actions the task takes (search/lookup/finish, or sql/submit). */
  actions: readonly ActionType[]
  steps: RehacStepView[]
  /** The human seat is an LLM simulating a person. */
  simulatedHuman: boolean
  /** The choice path so far ('0' agent, '1' human per step). */
  path: string
  ended: boolean
  reason: RehacDoneReason | null
  /** Only once the episode ended. */
  result: RehacResult | null
  /** Only once the episode ended, and never to a participant before. */
  gold: string | null
  /** The whole trajectory in the authors' format, once ended. */
  trajectory: string | null
}

export function rehacSessionView(ctx: ViewContext<typeof rehac>): RehacSessionView {
  const { state, instance } = ctx
  const ended = state.reason !== null
  const ask = ctx.ask
  const raw = (ctx.session.instance ?? {}) as { schemaSql?: unknown }
  const human = (ctx.seats as Record<string, { kind?: string }>).human
  const result = resultOf(state, DEFAULT_LAMBDA, (ctx.extras as { imported?: ImportedReward | null }).imported ?? null)
  return {
    task: {
      id: instance.id,
      kind: instance.kind,
      question: instance.question,
      preamble: instance.preamble ?? null,
      taskSet: instance.taskSet ?? null,
      schema: instance.kind === 'sql' && typeof raw.schemaSql === 'string' ? raw.schemaSql.slice(0, 20_000) : null,
    },
    threshold: state.threshold,
    t: ask ? ask.t : (state.steps.at(-1)?.t ?? 0),
    due: ask ? { kind: ask.kind, seat: ask.seat, t: ask.t } : null,
    actions: ACTIONS[instance.kind],
    steps: state.steps,
    simulatedHuman: human?.kind === 'llm',
    path: choicePath(state),
    ended,
    reason: state.reason,
    result: ended ? result : null,
    gold: ended ? instance.answer : null,
    trajectory: ended ? trajectoryText(state) : null,
  }
}

// ───────────────────────────── the run page and exports ─────────────────────────────

export interface Episode {
  sessionId: string
  key: string
  status: string
  taskId: string
  kind: string
  question: string
  path: string
  result: RehacResult | null
  trajectory: string | null
}

const episodeCache = replayCache((s: StoredSession & { key?: string }): Episode => {
  const { state, imported } = replayStored(s)
  return {
    sessionId: s.id,
    key: `${s.repetition}:${s.position}`,
    status: s.status,
    taskId: state.instance.id,
    kind: state.instance.kind,
    question: state.instance.question,
    path: choicePath(state),
    result: resultOf(state, DEFAULT_LAMBDA, imported),
    trajectory: state.reason ? trajectoryText(state) : null,
  }
})

export async function episodes(runId: string): Promise<Episode[]> {
  const rows = await db.protocolSession.findMany({
    where: { runId },
    orderBy: [{ repetition: 'asc' }, { position: 'asc' }, { createdAt: 'asc' }],
    select: { id: true, updatedAt: true, key: true },
  })
  const list = await episodeCache.of(rows)
  const keys = new Map(rows.map((r) => [r.id, r.key]))
  return list.map((e) => ({ ...e, key: keys.get(e.sessionId) ?? e.key }))
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null)

/** The run page: per finished episode T / EM / C / R at λ = 0.08, and the means with pooled HIR. */
export async function rehacRunView(runId: string, rawArgs: Record<string, string | undefined>) {
  const { page, pageSize } = z.object(pageInput).parse(rawArgs)
  const list = await episodes(runId)
  const done = list.filter((e) => e.result)
  const results = done.map((e) => e.result as RehacResult)
  const steps = results.reduce((a, r) => a + r.steps, 0)
  const start = (page - 1) * pageSize
  const run = await db.run.findUnique({ where: { id: runId }, select: { config: true } })
  const ex = PromptExamplesConfig.safeParse((run?.config as { examples?: unknown } | null)?.examples)
  return {
    lambda: DEFAULT_LAMBDA,
    /** The prompt policy's few-shot examples (server/examples.ts); null when the decider is no LLM. */
    examples: ex.success
      ? ex.data.source === 'study'
        ? { source: 'study' as const, sessionIds: ex.data.sessionIds }
        : { source: 'parley-default' as const, reason: ex.data.reason }
      : null,
    finished: done.length,
    total: list.length,
    summary: {
      T: mean(results.map((r) => r.T)),
      em: mean(results.map((r) => (r.em ? 1 : 0))),
      C: mean(results.map((r) => r.humanSteps)),
      R: mean(results.map((r) => r.R)),
      hir: steps ? results.reduce((a, r) => a + r.humanSteps, 0) / steps : null,
    },
    episodes: pageOf(
      list.slice(start, start + pageSize).map((e) => ({
        sessionId: e.sessionId,
        key: e.key,
        status: e.status,
        taskId: e.taskId,
        path: e.path,
        T: e.result?.T ?? null,
        em: e.result ? e.result.em : null,
        C: e.result?.humanSteps ?? null,
        R: e.result?.R ?? null,
      })),
      list.length,
      page,
      pageSize,
    ),
  }
}
export type RehacRunView = Awaited<ReturnType<typeof rehacRunView>>

export const rehacExports: Record<string, ExportTable> = {
  trajectories: {
    label: 'Trajectories (the authors’ JSONL: idx, trajectory with <solver> markers, em, f1)',
    description: 'One line per ended episode; idx is the episode’s position in the run.',
    async *rows(runId) {
      let idx = 0
      for (const e of await episodes(runId)) {
        if (!e.result || e.trajectory === null) continue
        yield { idx: idx++, trajectory: e.trajectory, em: e.result.em, f1: e.result.f1 }
      }
    },
  },
  episodes: {
    label: 'Episodes (T, EM, C, R at λ = 0.08)',
    async *rows(runId) {
      for (const e of await episodes(runId)) {
        yield {
          sessionId: e.sessionId,
          key: e.key,
          task: e.taskId,
          kind: e.kind,
          status: e.status,
          path: e.path,
          T: e.result?.T ?? null,
          em: e.result ? (e.result.em ? 1 : 0) : null,
          C: e.result?.humanSteps ?? null,
          steps: e.result?.steps ?? null,
          R: e.result?.R ?? null,
        }
      }
    },
  },
  ...rehacDataTables(episodes),
}
