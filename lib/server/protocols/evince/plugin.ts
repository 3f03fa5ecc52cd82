import { z } from 'zod'
import { canonicalLabel, entropy } from '@/lib/metrics/evince'
import {
  batchAccuracy,
  type CaseResult,
  caseResult,
  confusion,
  type Debater,
  distributionColumns,
  type EvinceAsk,
  type EvinceConfig,
  type EvinceInstance,
  type EvinceMessage,
  type EvinceState,
  evince,
  evinceConfig,
  finalDistribution,
  roundPoints,
  STOP_REASONS,
  textList,
  top1Correct,
  type TurnMessage,
} from '@/lib/protocols/evince'
import { describeRefused, type RefusedMessage, replayAccepted } from '@/lib/protocols/types'
import { highEntropy } from '@/lib/tasks/evince-prompts'
import { db } from '@/lib/server/db'
import { replayCache } from '@/lib/server/engine/run-reader'
import { badRequest } from '@/lib/server/errors'
import type { ExportTable, HumanContext, ProtocolPlugin, ViewContext } from '@/lib/server/engine/plugin'
import { Seats } from '@/lib/server/engine/seats'
import { pageInput, pageOf } from '@/lib/server/pagination'
import { evinceAgents, turnsOf } from '@/lib/server/protocols/evince/agents'
import { analysisOf } from '@/lib/server/protocols/evince/analysis'
import { evinceDemo } from '@/lib/server/protocols/evince/demo'
import { mergeDebateLabels } from '@/lib/server/protocols/evince/operations'
import {
  EvinceRunOptions,
  EvinceSetupInput,
  evinceLegacyToRun,
  evinceSetupFromForm,
  planEvince,
} from '@/lib/server/protocols/evince/setup'
import { evinceDatasets } from '@/lib/server/protocols/evince/datasets'
import { seedEvinceDemo } from '@/lib/server/protocols/evince/seed'

/**
 * EVINCE debates on the engine (the protocol: lib/protocols/evince; prompts: lib/tasks/evince-prompts).
 */

// ---------------------------------------------------------------------------------------------
// A person's turn: the top-k editor
// ---------------------------------------------------------------------------------------------

export const EvinceTurnInput = z.object({
  predictions: z
    .array(
      z.object({
        label: z.string().trim().min(1, 'Name every diagnosis.').max(200),
        probability: z.coerce.number().finite().min(0, 'Probabilities cannot be negative.').max(1),
        justification: z.string().trim().max(4000).default(''),
      }),
    )
    .min(1, 'Give at least one diagnosis.'),
  arguments: z.array(z.string().trim().max(4000)).max(50).default([]),
  counterArguments: z.array(z.string().trim().max(4000)).max(50).default([]),
})
type EvinceTurnInput = z.output<typeof EvinceTurnInput>

function turnMessage(ctx: HumanContext<EvinceConfig, EvinceInstance, EvinceState, EvinceAsk>, input: EvinceTurnInput) {
  const { config, ask } = ctx
  if (ask.kind !== 'turn') throw badRequest('It is not a debater’s turn.')
  const sum = input.predictions.reduce((a, p) => a + p.probability, 0)
  if (Math.abs(sum - 1) > 0.005)
    throw badRequest(`The probabilities sum to ${(sum * 100).toFixed(1)}%; they must sum to 100%.`, {
      predictions: ['Make the probabilities sum to 100%.'],
    })
  if (input.predictions.length > config.k)
    throw badRequest(`List at most ${config.k} diagnoses.`, { predictions: [`At most ${config.k}.`] })
  const labels = input.predictions.map((p) => canonicalLabel(p.label, config.aliases))
  if (new Set(labels).size !== labels.length)
    throw badRequest('Each diagnosis may appear once.', { predictions: ['Merge the repeated diagnosis.'] })
  if (config.labels.length) {
    const allowed = new Set(config.labels.map((l) => canonicalLabel(l, config.aliases)))
    const bad = input.predictions.filter((p) => !allowed.has(canonicalLabel(p.label, config.aliases)))
    if (bad.length) throw badRequest(`Not in this debate's label space: ${bad.map((b) => b.label).join(', ')}.`)
  }
  const message: TurnMessage = {
    seq: ask.j,
    kind: 'turn',
    sender: ctx.seat as Debater,
    round: ask.round,
    predictions: input.predictions,
    arguments: input.arguments.filter(Boolean),
    counterArguments: input.counterArguments.filter(Boolean),
  }
  return { message, meta: { audit: { round: ask.round, top: input.predictions[0]?.label } } }
}

/** The editor posts its turn as JSON in `turn`. */
function turnFromForm(f: Record<string, unknown>) {
  try {
    return typeof f.turn === 'string' ? JSON.parse(f.turn) : f
  } catch {
    throw badRequest('The turn could not be read; reload the page (your draft is kept).')
  }
}

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

function sessionView(ctx: ViewContext<EvinceConfig, EvinceInstance, EvinceState>) {
  const { config, instance, state } = ctx
  const final = finalDistribution(state)
  const ask = ctx.ask as EvinceAsk | null
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
    /** The same test the moderator's report prompt uses (lib/tasks/evince-prompts `highEntropy`). */
    highEntropy: final && state.stop ? highEntropy(final.crit) : false,
    report: state.report,
    next: ask ? { seat: ask.seat, kind: ask.kind, round: ask.round, j: ask.j } : null,
    pool: turnsOf(state.messages),
  }
}
export type EvinceSessionView = ReturnType<typeof sessionView>

/**
 * Replays one stored debate for the results and exports: up to the first message the rules refuse
 * (`refused`; a log written before a rule existed may hold one), so such a debate is excluded and
 * named instead of being counted or failing the page.
 */
function replayed(s: { config: unknown; instance: unknown; messages: unknown[] }) {
  const config = evinceConfig.parse(s.config)
  const instance = evince.instance.parse(s.instance) as EvinceInstance
  const { state, refused } = replayAccepted(evince, config, instance, s.messages as EvinceMessage[])
  return { config, instance, state: state as EvinceState, refused }
}

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
  const e = await db.experiment.findUniqueOrThrow({ where: { id: runId } })
  const config = evinceConfig.parse(e.config)
  const merges = analysisOf(e.analysis).merges
  const resultAliases = { ...config.aliases, ...merges }
  const sessions = await db.protocolSession.findMany({
    where: { experimentId: runId },
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
    const e = await db.experiment.findUniqueOrThrow({ where: { id: runId } })
    const config = evinceConfig.parse(e.config)
    const sessions = await db.protocolSession.findMany({
      where: { experimentId: runId },
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

// ---------------------------------------------------------------------------------------------
// Exports: rounds and finals, replayed 200 sessions at a time
// ---------------------------------------------------------------------------------------------

async function* debates(runId: string) {
  let cursor: string | undefined
  for (;;) {
    const page = await db.protocolSession.findMany({
      where: { experimentId: runId },
      orderBy: { id: 'asc' },
      take: 200,
      ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      select: {
        id: true,
        position: true,
        status: true,
        stopReason: true,
        config: true,
        instance: true,
        messages: { orderBy: { seq: 'asc' }, select: { body: true } },
      },
    })
    if (!page.length) return
    cursor = page.at(-1)?.id
    for (const s of page) yield { s, ...replayed({ ...s, messages: s.messages.map((m) => m.body) }) }
  }
}

/** The run's k and the aliases its results use (config aliases and label merges). */
async function exportSettings(runId: string) {
  const e = await db.experiment.findUniqueOrThrow({ where: { id: runId }, select: { config: true, analysis: true } })
  const config = evinceConfig.parse(e.config)
  return { k: config.k, aliases: { ...config.aliases, ...analysisOf(e.analysis).merges } }
}

/** The finals' `excluded` cell: which stored message the rules refuse, or null. */
const exclusion = (refused: RefusedMessage | null) => (refused ? describeRefused(refused) : null)

/**
 * JSONL keeps the lists as lists; CSV writes a distribution as one column per item (`A_1_label`,
 * `A_1_probability` … up to k; P_f and EnToPPS up to 2k, the most two top-k lists can hold) and a
 * list of texts as one cell with " | " between the items, so no cell holds JSON.
 */
const exports: Record<string, ExportTable> = {
  rounds: {
    label: 'Rounds (every metric per round)',
    async *rows(runId, format) {
      const { k } = await exportSettings(runId)
      for await (const { s, state } of debates(runId)) {
        for (const p of roundPoints(state.rounds)) {
          const r = state.rounds.find((x) => x.round === p.round)
          const { round, delta, crit: _mean, critA, critB, ...metrics } = p
          const A = r?.A?.predictions.map(({ label, probability }) => ({ label, probability }))
          const B = r?.B?.predictions.map(({ label, probability }) => ({ label, probability }))
          const head = { session: s.id, position: s.position, round, delta }
          const tail = { ...metrics, critA, critB }
          yield format === 'csv'
            ? {
                ...head,
                ...distributionColumns('A', A, k),
                ...distributionColumns('B', B, k),
                labels: textList(r?.metrics?.labels),
                ...tail,
                warnings: textList(r?.metrics?.warnings),
              }
            : { ...head, A, B, labels: r?.metrics?.labels, ...tail, warnings: r?.metrics?.warnings }
        }
      }
    },
  },
  finals: {
    label: 'Finals (one row per case)',
    async *rows(runId, format) {
      const { k, aliases } = await exportSettings(runId)
      for await (const { s, instance, state, refused } of debates(runId)) {
        const final = finalDistribution(state)
        // A debate whose log the rules refuse has no final: it is excluded, and the row says why.
        const done = s.status === 'done' && !refused
        const crit = done ? (final?.crit ?? null) : null
        const entopps = done ? (final?.entopps ?? null) : null
        const head = {
          session: s.id,
          position: s.position,
          symptoms: instance.input.symptoms,
          truth: instance.prediction,
          status: s.status,
          stopReason: s.stopReason,
          rounds: state.rounds.filter((r) => r.metrics).length,
          top1: crit?.length ? [...crit].sort((x, y) => y.probability - x.probability)[0]?.label : null,
          top1Correct: done ? top1Correct(instance.prediction, crit, aliases) : null,
        }
        const entropyOfFinal = done && final ? entropy(final.crit.map((p) => p.probability)) : null
        yield format === 'csv'
          ? {
              ...head,
              ...distributionColumns('final', crit, 2 * k),
              finalEntropy: entropyOfFinal,
              ...distributionColumns('entopps', entopps, 2 * k),
              conclusion: state.report?.conclusion ?? null,
              missingInformation: textList(state.report?.missingInformation),
              labTests: textList(state.report?.labTests),
              excluded: exclusion(refused),
            }
          : {
              ...head,
              final: crit,
              finalEntropy: entropyOfFinal,
              entopps,
              conclusion: state.report?.conclusion ?? null,
              missingInformation: state.report?.missingInformation ?? null,
              labTests: state.report?.labTests ?? null,
              excluded: exclusion(refused),
            }
      }
    },
  },
}

export const evincePlugin: ProtocolPlugin<typeof evince> = {
  protocol: evince,
  agents: evinceAgents,
  human: { input: EvinceTurnInput, toMessage: turnMessage as never, fromForm: turnFromForm },
  project: (m: EvinceMessage) => ({
    receiver: m.sender === 'A' ? 'B' : m.sender === 'B' ? 'A' : 'A,B',
    tag: m.kind,
    prediction:
      m.kind === 'turn'
        ? (m.predictions[0]?.label ?? '')
        : m.kind === 'crit'
          ? m.score.toFixed(3)
          : m.conclusion.slice(0, 500),
  }),
  setup: {
    options: EvinceRunOptions,
    plan: planEvince,
    legacy: { input: EvinceSetupInput, toRun: evinceLegacyToRun },
    fromForm: evinceSetupFromForm,
  },
  exports,
  views: { session: sessionView as never, run: runView, compare: compareView },
  seedDemo: seedEvinceDemo,
  datasets: evinceDatasets,
  demo: evinceDemo,
  operations: [mergeDebateLabels],
  title: (instance) => {
    const s = (instance as { input?: { symptoms?: string } } | null)?.input?.symptoms ?? 'case'
    return s.length > 60 ? `${s.slice(0, 59)}…` : s
  },
}
