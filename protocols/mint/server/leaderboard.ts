/**
 * MINT's leaderboard of a study (issue 26): the authors' imported runs (MintImportedRun) beside Parley's
 * own finished MINT runs, with the paper's metrics (core/metrics.ts):
 * - SR_k per run (model × feedback setting × budget k), micro, per task type and per data set;
 * - SR against k per model and feedback setting, with the OLS slope, intercept and R² over k = 1…5;
 * - Δfeedback per model: SR of a feedback run − SR without feedback at the same k and p, micro and per type;
 * - the invalid-action ratio of each run (flagged above 20 %);
 * - tokens and cost per run where known (Parley: its LLM calls; imported: the records' token counters,
 *   priced by the ModelPrice table when the model has a price).
 * SR_k always comes from the separate run with budget k (an imported max<k> folder, a Parley run's
 * config.k), never from the prefixes of a longer run. Two runs with the same model, setting and k are
 * both listed; the curve takes the one with more records.
 */
import { z } from 'zod'
import { replay } from '@/lib/protocols/types'
import { maxUploadMb } from '@/lib/limits.mjs'
import { type Actor, db, hasScope, replayCache, requireStudyAccess, type StoredSession, sql } from '@/lib/server/sdk'
import {
  deltaFeedback,
  type EpisodeOutcome,
  INVALID_ACTION_FLAG,
  invalidActionRatio,
  ols,
  round2,
  type SrBreakdown,
  type SuccessRate,
  successRates,
} from '../core/metrics'
import {
  DATASETS,
  type Dataset,
  MINT_PROTOCOL_ID,
  type MintMessage,
  mintConfig,
  mintInstance,
  mintMessage,
  mintProtocol,
  TASK_TYPES,
  type TaskType,
} from '../core/protocol'

export interface RunOutcomes {
  source: 'imported' | 'parley'
  /** imported: "<model>/<run folder>"; parley: the run's id. */
  id: string
  label: string
  model: string
  /** The feedback provider (a model, "human"), null without feedback. */
  feedback: string | null
  /** GT-textual, no_GT-binary …; null without feedback. */
  phf: string | null
  k: number
  p: number
  episodes: EpisodeOutcome[]
  tokens: { prompt: number; completion: number } | null
  costUsd: number | null
  /** Parley runs: sessions not counted (not finished, or a log the rules refuse). */
  notCounted: number
}

const rateOut = (r: SuccessRate) => ({ records: r.records, successes: r.successes, sr: round2(r.sr) })

export interface LeaderboardRun {
  source: 'imported' | 'parley'
  id: string
  label: string
  model: string
  setting: string
  feedback: string | null
  phf: string | null
  k: number
  p: number
  records: number
  successes: number
  sr: number | null
  byType: Partial<Record<TaskType, { records: number; successes: number; sr: number | null }>>
  byTask: Partial<Record<Dataset, { records: number; successes: number; sr: number | null }>>
  invalid: { invalid: number; total: number; ratio: number | null; flagged: boolean }
  tokens: { prompt: number; completion: number } | null
  costUsd: number | null
  notCounted: number
}

export interface LeaderboardCurve {
  model: string
  setting: string
  source: 'imported' | 'parley'
  points: { k: number; sr: number; runId: string }[]
  /** OLS of SR over k = 1…5 (null with fewer than two budgets there). */
  fit: { slope: number; intercept: number; r2: number | null } | null
}

export interface LeaderboardDelta {
  model: string
  with: { id: string; label: string }
  without: { id: string; label: string }
  k: number
  micro: number | null
  byType: Partial<Record<TaskType, number | null>>
}

export interface LeaderboardData {
  runs: LeaderboardRun[]
  curves: LeaderboardCurve[]
  deltas: LeaderboardDelta[]
  taskTypes: TaskType[]
  datasets: Dataset[]
  invalidFlag: number
}

/** The feedback setting as the authors name its folder: "F=None", "F=gpt-4-0613/PHF=no_GT-textual". */
export function settingName(feedback: string | null, phf: string | null): string {
  return feedback === null ? 'F=None' : `F=${feedback}${phf ? `/PHF=${phf}` : ''}`
}

const round = (x: number | null, d: number) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d)

/** The leaderboard of some runs (pure). */
export function buildLeaderboard(input: readonly RunOutcomes[]): LeaderboardData {
  const rates = new Map<string, SrBreakdown>()
  const runs: LeaderboardRun[] = [...input]
    .sort(
      (a, b) =>
        a.model.localeCompare(b.model) ||
        settingName(a.feedback, a.phf).localeCompare(settingName(b.feedback, b.phf)) ||
        a.k - b.k ||
        a.label.localeCompare(b.label),
    )
    .map((r) => {
      const b = successRates(r.episodes)
      rates.set(r.id, b)
      const inv = invalidActionRatio(r.episodes)
      return {
        source: r.source,
        id: r.id,
        label: r.label,
        model: r.model,
        setting: settingName(r.feedback, r.phf),
        feedback: r.feedback,
        phf: r.phf,
        k: r.k,
        p: r.p,
        ...rateOut(b),
        byType: Object.fromEntries(Object.entries(b.byType).map(([k, v]) => [k, rateOut(v)])),
        byTask: Object.fromEntries(Object.entries(b.byTask).map(([k, v]) => [k, rateOut(v)])),
        invalid: { ...inv, ratio: inv.ratio === null ? null : round2(inv.ratio * 100) },
        tokens: r.tokens,
        costUsd: r.costUsd === null ? null : round(r.costUsd, 4),
        notCounted: r.notCounted,
      }
    })
  // The curves: per model, setting and source, one point per k (the run with the most records).
  const groups = new Map<string, LeaderboardRun[]>()
  for (const r of runs) {
    if (r.sr === null) continue
    const key = JSON.stringify([r.model, r.setting, r.source])
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  const curves: LeaderboardCurve[] = [...groups.values()].map((rs) => {
    const byK = new Map<number, LeaderboardRun>()
    for (const r of rs) if ((byK.get(r.k)?.records ?? -1) < r.records) byK.set(r.k, r)
    const points = [...byK.values()]
      .sort((a, b) => a.k - b.k)
      .map((r) => ({ k: r.k, sr: (rates.get(r.id) as SrBreakdown).sr as number, runId: r.id }))
    const inRange = points.filter((p) => p.k >= 1 && p.k <= 5).map((p) => ({ x: p.k, y: p.sr }))
    const f = new Set(inRange.map((p) => p.x)).size >= 2 ? ols(inRange) : null
    const first = rs[0] as LeaderboardRun
    return {
      model: first.model,
      setting: first.setting,
      source: first.source,
      points: points.map((p) => ({ ...p, sr: round2(p.sr) as number })),
      fit: f
        ? { slope: round(f.slope, 3) as number, intercept: round(f.intercept, 3) as number, r2: round(f.r2, 4) }
        : null,
    }
  })
  // Δfeedback: every feedback run against the run without feedback of the same model, source, k and p.
  const deltas: LeaderboardDelta[] = []
  for (const w of runs.filter((r) => r.feedback !== null && r.sr !== null)) {
    const base = runs
      .filter((r) => r.feedback === null && r.model === w.model && r.source === w.source && r.k === w.k && r.p === w.p)
      .sort((a, b) => b.records - a.records)[0]
    if (!base || base.sr === null) continue
    const d = deltaFeedback(rates.get(w.id) as SrBreakdown, rates.get(base.id) as SrBreakdown)
    const { micro, ...byType } = d
    deltas.push({
      model: w.model,
      with: { id: w.id, label: w.label },
      without: { id: base.id, label: base.label },
      k: w.k,
      micro: round2(micro),
      byType: Object.fromEntries(Object.entries(byType).map(([k, v]) => [k, round2(v ?? null)])),
    })
  }
  const present = <T extends string>(all: readonly T[], pick: (r: LeaderboardRun) => object) =>
    all.filter((t) => runs.some((r) => t in pick(r)))
  return {
    runs,
    curves,
    deltas,
    taskTypes: present(TASK_TYPES, (r) => r.byType),
    datasets: present(DATASETS, (r) => r.byTask),
    invalidFlag: INVALID_ACTION_FLAG * 100,
  }
}

// ───────────────────────────── reading the study ─────────────────────────────

const outcomeSchema = z.object({
  success: z.boolean(),
  actions: z.object({ propose_solution: z.number(), use_tool: z.number(), invalid_action: z.number() }),
  tokenCounter: z.record(z.string(), z.number()).default({}),
})

/** US dollars of `tokensIn`/`tokensOut` for `model` by the ModelPrice table (exact name, else the longest "prefix*"). */
function priceOf(
  prices: { model: string; inputPerMTok: number; outputPerMTok: number }[],
  model: string,
): { inputPerMTok: number; outputPerMTok: number } | null {
  const exact = prices.find((p) => p.model === model)
  if (exact) return exact
  return (
    prices
      .filter((p) => p.model.endsWith('*') && model.startsWith(p.model.slice(0, -1)))
      .sort((a, b) => b.model.length - a.model.length)[0] ?? null
  )
}

/** The study's imported runs (one per model and run folder, over their results files). */
export async function importedRuns(studyId: string): Promise<RunOutcomes[]> {
  const rows = await db.mintImportedRun.findMany({
    where: { studyId },
    orderBy: { path: 'asc' },
    select: { model: true, feedback: true, phf: true, k: true, p: true, dataset: true, path: true, outcomes: true },
  })
  const prices = await db.modelPrice.findMany({ select: { model: true, inputPerMTok: true, outputPerMTok: true } })
  const runs = new Map<string, RunOutcomes>()
  for (const row of rows) {
    const folder = row.path.split('/').slice(0, -3).join('/')
    const r = runs.get(folder) ?? {
      source: 'imported' as const,
      id: folder,
      label: folder,
      model: row.model,
      feedback: row.feedback,
      phf: row.phf,
      k: row.k,
      p: row.p,
      episodes: [],
      tokens: { prompt: 0, completion: 0 },
      costUsd: null,
      notCounted: 0,
    }
    runs.set(folder, r)
    const outcomes = z.array(outcomeSchema).parse(row.outcomes)
    for (const o of outcomes) {
      r.episodes.push({ dataset: row.dataset as Dataset, success: o.success, counts: o.actions })
      const t = r.tokens as { prompt: number; completion: number }
      // the agent's and (feedback runs) the feedback model's tokens
      t.prompt += (o.tokenCounter.prompt_tokens ?? 0) + (o.tokenCounter.feedback_prompt_tokens ?? 0)
      t.completion += (o.tokenCounter.completion_tokens ?? 0) + (o.tokenCounter.feedback_completion_tokens ?? 0)
    }
  }
  for (const r of runs.values()) {
    // Priced only without feedback: the feedback model's tokens would need its own price.
    const price = r.feedback === null ? priceOf(prices, r.model) : null
    if (price && r.tokens)
      r.costUsd = (r.tokens.prompt * price.inputPerMTok + r.tokens.completion * price.outputPerMTok) / 1e6
  }
  return [...runs.values()]
}

interface ParleyEpisode {
  counted: boolean
  dataset: Dataset | null
  success: boolean
  counts: EpisodeOutcome['counts']
}

/** A finished session's outcome, from its replayed log (never from a prefix of another run). */
const episodeCache = replayCache((s: StoredSession): ParleyEpisode => {
  const none: ParleyEpisode = { counted: false, dataset: null, success: false, counts: undefined }
  const raw = (s.config ?? {}) as Record<string, unknown>
  const config = mintConfig.safeParse({ k: raw.k, p: raw.p, feedback: raw.feedback, countDown: raw.countDown })
  const instance = mintInstance.safeParse(s.instance)
  if (!config.success || !instance.success) return none
  const messages: MintMessage[] = []
  for (const m of s.messages) {
    const parsed = mintMessage.safeParse(m.body)
    if (!parsed.success) return none
    messages.push(parsed.data)
  }
  try {
    const state = replay(mintProtocol, config.data, instance.data, messages)
    if (!state.finished) return { ...none, dataset: instance.data.dataset }
    return { counted: true, dataset: instance.data.dataset, success: state.success, counts: state.counts }
  } catch {
    return none
  }
})

const seatFill = z.union([
  z.object({
    kind: z.literal('llm'),
    model: z.object({ connectionId: z.string(), model: z.string().optional(), name: z.string().optional() }),
  }),
  z.object({ kind: z.string() }),
])
export function seatName(seats: unknown, seat: string): string | null {
  const fill = seatFill.safeParse((seats as Record<string, unknown> | null)?.[seat])
  if (!fill.success) return null
  if ('model' in fill.data) return fill.data.model.name || fill.data.model.model || fill.data.model.connectionId
  return fill.data.kind
}

/** The study's own MINT runs: their finished sessions replayed, their LLM calls summed. */
export async function parleyRuns(studyId: string): Promise<RunOutcomes[]> {
  const runs = await db.run.findMany({
    where: { studyId, protocol: MINT_PROTOCOL_ID },
    orderBy: { createdAt: 'asc' },
    select: { id: true, name: true, config: true, seats: true },
  })
  if (runs.length === 0) return []
  const { rows: costs } = await sql().query<{
    runId: string
    tin: string | null
    tout: string | null
    cost: number | null
    priced: string
    calls: string
  }>(
    `SELECT s."runId", sum(c."tokensIn") AS tin, sum(c."tokensOut") AS tout, sum(c."costUsd") AS cost,
            count(c."costUsd") AS priced, count(c.id) AS calls
       FROM "LlmCall" c JOIN "ProtocolSession" s ON s.id = c."sessionRef"
      WHERE s."runId" = ANY($1) GROUP BY s."runId"`,
    [runs.map((r) => r.id)],
  )
  const out: RunOutcomes[] = []
  for (const run of runs) {
    const config = mintConfig.safeParse(
      Object.fromEntries(
        ['k', 'p', 'feedback', 'countDown'].map((k) => [k, (run.config as Record<string, unknown> | null)?.[k]]),
      ),
    )
    if (!config.success) continue
    // The run's own episodes: a branch (a fork with other feedback, mint.branch) is not one of them.
    const sessions = await db.protocolSession.findMany({
      where: { runId: run.id, status: 'done', parentId: null },
      select: { id: true, updatedAt: true },
    })
    const total = await db.protocolSession.count({ where: { runId: run.id, parentId: null } })
    const eps = await episodeCache.of(sessions)
    const counted = eps.filter((e) => e.counted && e.dataset !== null)
    const f = config.data.feedback
    const c = costs.find((x) => x.runId === run.id)
    out.push({
      source: 'parley',
      id: run.id,
      label: run.name,
      model: seatName(run.seats, 'agent') ?? 'unknown',
      feedback: f.mode === 'none' ? null : (seatName(run.seats, 'feedback') ?? 'unknown'),
      phf: f.mode === 'none' ? null : `${f.groundTruth ? 'GT' : 'no_GT'}-${f.mode}`,
      k: config.data.k,
      p: config.data.p,
      episodes: counted.map((e) => ({ dataset: e.dataset as Dataset, success: e.success, counts: e.counts })),
      tokens: c ? { prompt: Number(c.tin ?? 0), completion: Number(c.tout ?? 0) } : null,
      // Known only when every call was priced.
      costUsd: c && Number(c.priced) === Number(c.calls) && c.cost !== null ? Number(c.cost) : null,
      notCounted: total - counted.length,
    })
  }
  return out
}

/** The study's leaderboard: imported runs and Parley's own. */
export async function mintLeaderboard(studyId: string): Promise<LeaderboardData> {
  const [imported, own] = await Promise.all([importedRuns(studyId), parleyRuns(studyId)])
  return buildLeaderboard([...imported, ...own])
}

export interface LeaderboardPageData extends LeaderboardData {
  page: 'leaderboard'
  /** The import form is offered (the actor may change the study); the operation checks again. */
  canImport: boolean
  maxUploadMb: number
}

/**
 * The plugin's `views.studyPage` for MINT's pages under a study: `leaderboard` (read access is checked
 * by the engine before this is called); null for any other path (404).
 */
export async function mintStudyPage(
  actor: Actor,
  studyId: string,
  path: string[],
  _args: Record<string, string>,
): Promise<{ title: string; data: LeaderboardPageData } | null> {
  if (path.length !== 1 || path[0] !== 'leaderboard') return null
  const canImport =
    hasScope(actor.role, 'studies:update') &&
    (await requireStudyAccess(db, actor, studyId, 'write').then(
      () => true,
      () => false,
    ))
  return {
    title: 'MINT leaderboard',
    data: { page: 'leaderboard', canImport, maxUploadMb: maxUploadMb(), ...(await mintLeaderboard(studyId)) },
  }
}

export interface MintPanelData {
  runs: number
  importedFiles: number
  importedModels: string[]
}

/** The plugin's `views.studyPanel`: a card linking to the leaderboard, with what it holds. */
export async function mintStudyPanel(_actor: Actor, studyId: string): Promise<MintPanelData> {
  const [runs, imported] = await Promise.all([
    db.run.count({ where: { studyId, protocol: MINT_PROTOCOL_ID } }),
    db.mintImportedRun.groupBy({
      by: ['model'],
      where: { studyId },
      _count: { _all: true },
      orderBy: { model: 'asc' },
    }),
  ])
  return {
    runs,
    importedFiles: imported.reduce((n, m) => n + m._count._all, 0),
    importedModels: imported.map((m) => m.model),
  }
}
