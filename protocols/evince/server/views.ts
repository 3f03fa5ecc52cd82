import { z } from 'zod'
import { entropy } from '@/protocols/evince/core/metrics'
import {
  batchAccuracy,
  type CaseResult,
  caseResult,
  confusion,
  type evince,
  evinceConfig,
  finalDistribution,
  roundPoints,
  STOP_REASONS,
} from '@/protocols/evince/core'
import { highEntropy } from '@/protocols/evince/core/prompts'
import { Seats, db, pageInput, pageOf, replayCache, type PluginViews, type ViewContext } from '@/lib/server/sdk'
import { turnsOf } from '@/protocols/evince/server/agents'
import { analysisOf } from '@/protocols/evince/server/analysis'
import { replayed } from '@/protocols/evince/server/replayed'

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

function sessionView(ctx: ViewContext<typeof evince>) {
  const { config, instance, state } = ctx
  const final = finalDistribution(state)
  const { ask } = ctx
  return {
    config,
    symptoms: instance.input.symptoms,
    /** The ground truth is for researchers; a debater does not see it. */
    truth: ctx.mySeats.length ? null : instance.prediction,
    rounds: state.rounds.map((r) => ({
      round: r.round,
      delta: r.delta,
      A: r.A ?? null,
      B: r.B ?? null,
      critA: r.critA ?? null,
      critB: r.critB ?? null,
      crit: r.crit ?? null,
      metrics: r.metrics ?? null,
    })),
    points: roundPoints(state.rounds),
    stopChecks: state.stopChecks,
    stopLabel: state.stop ? (STOP_REASONS[state.stop] ?? state.stop) : null,
    final,
    finalEntropy: final && state.stop ? entropy(final.crit.map((p) => p.probability)) : null,
    /** The same test the moderator's report prompt uses (protocols/evince/core/prompts `highEntropy`). */
    highEntropy: final && state.stop ? highEntropy(final.crit) : false,
    report: state.report,
    next: ask ? { seat: ask.seat, kind: ask.kind, round: ask.round, j: ask.j } : null,
    pool: turnsOf(state.messages),
  }
}
export type EvinceSessionView = ReturnType<typeof sessionView>

/**
 * Case results, replayed from the log once per session version (the engine's replay cache), so a run
 * page that re-reads itself on every live event replays only the sessions that changed since.
 */
const cases = replayCache(
  (row) => {
    const { instance, state, refused } = replayed({ ...row, messages: row.messages.map((m) => m.body) })
    return caseResult(row, instance, state, refused)
  },
  { max: 50_000, batch: 500 },
)
const caseResults = (sessions: ReadonlyArray<{ id: string; updatedAt: Date }>): Promise<CaseResult[]> =>
  cases.of(sessions)

async function runView(runId: string, rawArgs: Record<string, string | undefined>) {
  const { page, pageSize } = z.object(pageInput).parse(rawArgs)
  const e = await db.run.findUniqueOrThrow({ where: { id: runId } })
  const config = evinceConfig.parse(e.config)
  const merges = analysisOf(e.analysis).merges
  const resultAliases = { ...config.aliases, ...merges }
  const sessions = await db.protocolSession.findMany({
    where: { runId: runId },
    orderBy: { position: 'asc' },
    select: { id: true, position: true, status: true, stopReason: true, stallError: true, updatedAt: true },
  })
  const cases = await caseResults(sessions)
  const stops: Record<string, number> = {}
  for (const c of cases) if (c.stopReason) stops[c.stopReason] = (stops[c.stopReason] ?? 0) + 1
  const start = (page - 1) * pageSize
  const excluded = cases.filter((c) => c.excluded)
  return {
    config,
    seats: Seats.parse(e.seats),
    stops,
    merges,
    /** Debates left out of every result because their logs break the rules (the first 20, and how many). */
    excluded: {
      count: excluded.length,
      cases: excluded
        .slice(0, 20)
        .map((c) => ({ sessionId: c.sessionId, position: c.position, reason: c.excluded as string })),
    },
    accuracy: batchAccuracy(cases, config.k, resultAliases),
    confusion: confusion(cases, resultAliases),
    cases: pageOf(
      cases.slice(start, start + pageSize).map((c) => ({
        ...c,
        stallError: sessions.find((s) => s.id === c.sessionId)?.stallError ?? null,
      })),
      cases.length,
      page,
      pageSize,
    ),
  }
}
export type EvinceRunView = Awaited<ReturnType<typeof runView>>

/**
 * Two debate runs side by side: each run's accuracy table (with its own aliases and label merges)
 * and its settings; the page writes B − A beside them.
 */
async function compareView(runA: string, runB: string) {
  const one = async (runId: string) => {
    const e = await db.run.findUniqueOrThrow({ where: { id: runId } })
    const config = evinceConfig.parse(e.config)
    const sessions = await db.protocolSession.findMany({
      where: { runId: runId },
      orderBy: { position: 'asc' },
      select: { id: true, position: true, status: true, stopReason: true, stallError: true, updatedAt: true },
    })
    const cases = await caseResults(sessions)
    const aliases = { ...config.aliases, ...analysisOf(e.analysis).merges }
    return {
      k: config.k,
      maxRounds: config.maxRounds,
      cases: cases.length,
      accuracy: batchAccuracy(cases, config.k, aliases),
    }
  }
  const [a, b] = await Promise.all([one(runA), one(runB)])
  return { a, b }
}
export type EvinceCompareView = Awaited<ReturnType<typeof compareView>>

/** What EVINCE's pages read: the session view, the run's results, two runs compared (loaded on first use). */
export const evinceViews: PluginViews<typeof evince> = { session: sessionView, run: runView, compare: compareView }
