import { z } from 'zod'
import { accuracy, canonicalLabel, entropy, type LabelProb, type RoundMetrics } from '@/lib/metrics/evince'
import {
  EVINCE_PROTOCOL_VERSION,
  type EvinceRound,
  type EvinceState,
  evince,
  evinceConfig,
  finalDistribution,
  STOP_REASONS,
  type TurnMessage,
} from '@/lib/protocols/evince'
import { replay } from '@/lib/protocols/types'
import { highEntropy } from '@/lib/tasks/evince-prompts'
import { hasScope } from '@/lib/server/auth/roles'
import { db } from '@/lib/server/db'
import { badRequest, conflict, isUniqueViolation, notFound } from '@/lib/server/errors'
import { enqueueSteps } from '@/lib/server/jobs/pxp'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf } from '@/lib/server/pagination'
import { appendDebateMessage, DebateInstance, EvinceSeats, evinceLog } from '@/lib/server/runner/evince'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { usableConnection } from '@/lib/server/services/connections'
import { assertImported } from '@/lib/server/services/datasets'
import { experimentPage } from '@/lib/server/services/experiment-views'
import { visibleSessions } from '@/lib/server/services/pxp-sessions'
import { id, requireStudyAccess, studiesWhere, studyAccess } from '@/lib/server/services/studies'
import { checkSessionCap, createSessions } from '@/lib/server/services/sessions'

/**
 * EVINCE debates. A debate run is an `Experiment` with protocol "evince" over a case set (a dataset
 * of kind "cases"; a single typed case goes into the study's "Single cases" dataset), one session
 * per case. Reads replay each session's log through the protocol, so every number on the pages is
 * derived from M exactly as the runner derived it.
 */

const debaterInput = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('llm'),
    connectionId: id,
    model: z.string().trim().max(200).optional(),
    temperature: z.coerce.number().min(0).max(2).optional(),
  }),
  z.object({ kind: z.literal('human'), userId: id }),
])

export const CreateDebateInput = z
  .object({
    studyId: id,
    name: z.string({ error: 'Name the debate.' }).trim().min(1, 'Name the debate.').max(120),
    A: debaterInput,
    B: debaterInput,
    /** The moderator's judge (CRIT and the report); absent = no CRIT, no report. */
    judge: z.object({ connectionId: id, model: z.string().trim().max(200).optional() }).optional(),
    config: evinceConfig.omit({ labels: true, aliases: true }).partial().default({}),
    aliases: z.record(z.string().max(200), z.string().max(200)).default({}),
    /** Constrain the label space to the case set's ground-truth labels. */
    constrained: z.boolean().default(false),
    /** A case set … */
    datasetId: id.optional(),
    sample: z.coerce.number().int().min(1).max(10_000).optional(),
    /** … or one case typed in. */
    case: z
      .object({
        symptoms: z.string().trim().min(3, 'Describe the case (the symptoms).').max(10_000),
        truth: z.string().trim().max(200).default(''),
      })
      .optional(),
    start: z.boolean().default(true),
  })
  .superRefine((v, ctx) => {
    if (!v.datasetId === !v.case)
      ctx.addIssue({ code: 'custom', path: ['datasetId'], message: 'Choose a case set or type one case.' })
    if (v.A.kind === 'human' && v.B.kind === 'human')
      ctx.addIssue({ code: 'custom', path: ['B'], message: 'At least one debater must be an LLM.' })
  })

const SINGLE_CASES = 'Single cases'

export const createDebate = defineOperation({
  name: 'debates.create',
  scope: 'studies:update',
  input: CreateDebateInput,
  async run(actor, input) {
    await requireStudyAccess(db, actor, input.studyId, 'write')
    const refs = [input.A, input.B].filter((s) => s.kind === 'llm') as Array<{ connectionId: string }>
    if (input.judge) refs.push(input.judge)
    for (const ref of refs) await usableConnection(actor, ref.connectionId)
    for (const s of [input.A, input.B])
      if (s.kind === 'human') {
        const member = await db.studyMember.findFirst({ where: { studyId: input.studyId, userId: s.userId } })
        if (!member) throw badRequest('The human debater must be a member of the study.', { A: ['Not a member.'] })
      }
    const withJudge = !!input.judge
    const seat = (s: z.infer<typeof debaterInput>) =>
      s.kind === 'llm'
        ? {
            kind: 'llm' as const,
            generator: {
              connectionId: s.connectionId,
              ...(s.model ? { model: s.model } : {}),
              ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
            },
          }
        : { kind: 'human' as const, userId: s.userId }
    const seats = EvinceSeats.parse({
      A: seat(input.A),
      B: seat(input.B),
      moderator: input.judge
        ? {
            kind: 'llm',
            judge: {
              connectionId: input.judge.connectionId,
              ...(input.judge.model ? { model: input.judge.model } : {}),
            },
          }
        : { kind: 'program' },
    })
    const created = await db.$transaction(
      async (tx) => {
        let datasetId = input.datasetId
        let instanceIds: string[] | undefined
        let cases: number
        if (input.case) {
          let ds = await tx.dataset.findFirst({
            where: { studyId: input.studyId, kind: 'cases', name: SINGLE_CASES },
          })
          ds ??= await tx.dataset.create({
            data: {
              studyId: input.studyId,
              name: SINGLE_CASES,
              kind: 'cases',
              source: 'typed in',
              createdById: actor.userId || null,
            },
          })
          const last = await tx.instance.findFirst({ where: { datasetId: ds.id }, orderBy: { index: 'desc' } })
          const inst = await tx.instance.create({
            data: {
              datasetId: ds.id,
              index: (last?.index ?? -1) + 1,
              input: { symptoms: input.case.symptoms },
              prediction: input.case.truth,
              explanation: '',
            },
          })
          datasetId = ds.id
          instanceIds = [inst.id]
          cases = 1
        } else {
          const ds = await tx.dataset.findFirst({ where: { id: input.datasetId, studyId: input.studyId } })
          if (!ds) throw notFound('Dataset')
          if (ds.kind !== 'cases') throw badRequest(`Debates run on case sets; "${ds.name}" is a ${ds.kind} dataset.`)
          assertImported(ds)
          const available = await tx.instance.count({ where: { datasetId: ds.id } })
          if (!available) throw badRequest('The case set is empty.')
          cases = checkSessionCap(Math.min(input.sample ?? available, available), 1)
        }
        let labels: string[] = []
        if (input.constrained) {
          const all = await tx.instance.findMany({
            where: { datasetId },
            select: { prediction: true },
            distinct: ['prediction'],
          })
          labels = all
            .map((x) => x.prediction)
            .filter(Boolean)
            .sort()
          if (!labels.length) throw badRequest('The case set has no ground-truth labels to constrain the debate to.')
        }
        const config = evinceConfig.parse({
          ...input.config,
          ...(withJudge ? {} : { crit: false, report: false }),
          aliases: input.aliases,
          labels,
        })
        const experiment = await tx.experiment.create({
          data: {
            studyId: input.studyId,
            name: input.name,
            protocol: 'evince',
            task: 'diagnosis',
            datasetId: datasetId as string,
            config,
            seats,
            repetitions: 1,
            carryOver: false,
            status: 'preparing',
            sessionsPlanned: cases,
            createdById: actor.userId || null,
          },
        })
        await writeAudit(tx, {
          actor: actorRef(actor),
          action: 'debate.create',
          resourceType: 'experiment',
          resourceId: experiment.id,
          studyId: input.studyId,
          after: { name: input.name, cases, config, seats },
        })
        return { id: experiment.id, datasetId: datasetId as string, instanceIds, cases, config }
      },
      { timeout: 60_000 },
    )
    const assignee = [seats.A, seats.B].map((s) => (s.kind === 'human' ? s.userId : null)).find(Boolean) ?? null
    const ready = await createSessions(
      {
        experimentId: created.id,
        studyId: input.studyId,
        plan: {
          datasetId: created.datasetId,
          ...(created.instanceIds ? { instanceIds: created.instanceIds } : {}),
          ...(input.sample ? { sample: input.sample } : {}),
          repetitions: 1,
          shuffle: false,
          seats: [{ seats, assigneeId: assignee }],
          protocol: 'evince',
          protocolVersion: EVINCE_PROTOCOL_VERSION,
          task: 'diagnosis',
          config: created.config,
          statusWhenReady: input.start ? 'running' : 'draft',
        },
      },
      created.cases,
    )
    const first = ready
      ? await db.protocolSession.findFirst({ where: { experimentId: created.id }, orderBy: { position: 'asc' } })
      : null
    return {
      id: created.id,
      cases: created.cases,
      started: input.start,
      preparing: !ready,
      firstSessionId: first?.id ?? null,
    }
  },
})

export const listDebates = defineOperation({
  name: 'debates.list',
  scope: 'studies:read',
  input: z.object({ ...pageInput }),
  run: (actor, { page, pageSize }) =>
    experimentPage({ study: studiesWhere(actor, 'read'), protocol: 'evince' }, page, pageSize),
})

/** A debate session replayed: its state, per-round metrics and the final distribution. */
export function replayDebate(s: {
  config: unknown
  instance: unknown
  messages: Array<{ seq: number; payload: unknown }>
}) {
  const config = evinceConfig.parse(s.config)
  const instance = DebateInstance.parse(s.instance)
  const state = replay(evince, config, instance, evinceLog(s.messages)) as EvinceState<typeof instance>
  const ask = evince.next(state)
  const final = finalDistribution(state)
  return { config, instance, state, ask, final }
}

/** One round's numbers, flat: what the charts, the metrics table and the rounds export show. */
export type RoundPoint = { round: number; delta: number } & Omit<
  RoundMetrics,
  'labels' | 'wdOrdinal' | 'rawSumA' | 'rawSumB' | 'warnings'
> & { critA: number | null; critB: number | null; crit: number | null }

/** The complete rounds (both turns in) as flat points. */
export function roundPoints(rounds: readonly EvinceRound[]): RoundPoint[] {
  return rounds.flatMap((r) => {
    if (!r.metrics) return []
    const { labels: _l, wdOrdinal: _o, rawSumA: _a, rawSumB: _b, warnings: _w, ...metrics } = r.metrics
    return [
      {
        round: r.round,
        delta: r.delta,
        ...metrics,
        critA: r.critA?.score ?? null,
        critB: r.critB?.score ?? null,
        crit: r.crit ?? null,
      },
    ]
  })
}

export interface CaseResult {
  sessionId: string
  position: number
  status: string
  stopReason: string | null
  symptoms: string
  truth: string
  rounds: number
  aloneA: LabelProb[] | null
  firstB: LabelProb[] | null
  final: LabelProb[] | null
  /** EnToPPS (appendix F) of the same last round, for comparison. */
  entopps: LabelProb[] | null
  finalEntropy: number | null
}

export function caseResult(s: {
  id: string
  position: number
  status: string
  stopReason: string | null
  config: unknown
  instance: unknown
  messages: Array<{ seq: number; payload: unknown }>
}): CaseResult {
  const { instance, state, final } = replayDebate(s)
  const first = state.rounds[0]
  return {
    sessionId: s.id,
    position: s.position,
    status: s.status,
    stopReason: s.stopReason,
    symptoms: instance.input.symptoms,
    truth: instance.prediction,
    rounds: state.rounds.filter((r) => r.A && r.B).length,
    aloneA: first?.A?.predictions ?? null,
    firstB: first?.B?.predictions ?? null,
    final: s.status === 'done' ? (final?.crit ?? null) : null,
    entopps: s.status === 'done' ? (final?.entopps ?? null) : null,
    finalEntropy: s.status === 'done' && final ? entropy(final.crit.map((p) => p.probability)) : null,
  }
}

/** Accuracy (top-1, top-k, MRR with 95% intervals) of A alone, B's first answer and the debate. */
export function batchAccuracy(cases: CaseResult[], k: number, aliases: Record<string, string>) {
  const withTruth = cases.filter((c) => c.truth && c.status === 'done')
  const of = (pick: (c: CaseResult) => LabelProb[] | null) =>
    accuracy(
      withTruth.flatMap((c) => {
        const d = pick(c)
        return d ? [{ truth: c.truth, final: d }] : []
      }),
      k,
      aliases,
    )
  return {
    n: withTruth.length,
    rows: [
      { key: 'A', label: 'Debater A alone (round 1)', ...of((c) => c.aloneA) },
      { key: 'B', label: "Debater B, round 1 (after seeing A's answer)", ...of((c) => c.firstB) },
      { key: 'debate', label: 'EVINCE debate (CRIT-weighted P_f)', ...of((c) => c.final) },
      { key: 'entopps', label: 'EVINCE debate, EnToPPS combination', ...of((c) => c.entopps) },
    ],
  }
}

/** Final top-1 against the ground truth, labels canonicalised: {truth → {predicted → count}}. */
export function confusion(cases: CaseResult[], aliases: Record<string, string>) {
  const m = new Map<string, Map<string, number>>()
  for (const c of cases) {
    if (!c.truth || !c.final?.length) continue
    const t = canonicalLabel(c.truth, aliases)
    const p = canonicalLabel(c.final[0]?.label ?? '', aliases)
    const row = m.get(t) ?? new Map<string, number>()
    row.set(p, (row.get(p) ?? 0) + 1)
    m.set(t, row)
  }
  const truths = [...m.keys()].sort()
  const predicted = [...new Set([...m.values()].flatMap((r) => [...r.keys()]))].sort()
  return { truths, predicted, counts: truths.map((t) => predicted.map((p) => m.get(t)?.get(p) ?? 0)) }
}

/**
 * Case results, replayed from the log once per session version: a result is kept (per process,
 * bounded) under the session's id and `updatedAt`, which every append moves, so a run page that
 * re-reads itself on every live event replays only the sessions that changed since.
 */
const resultCache = new Map<string, { at: number; result: CaseResult }>()
const RESULT_CACHE_MAX = 50_000

async function caseResults(
  sessions: ReadonlyArray<{ id: string; position: number; status: string; stopReason: string | null; updatedAt: Date }>,
): Promise<CaseResult[]> {
  const stale = sessions.filter((s) => resultCache.get(s.id)?.at !== s.updatedAt.getTime())
  for (let i = 0; i < stale.length; i += 500) {
    const rows = await db.protocolSession.findMany({
      where: { id: { in: stale.slice(i, i + 500).map((s) => s.id) } },
      select: {
        id: true,
        position: true,
        status: true,
        stopReason: true,
        updatedAt: true,
        config: true,
        instance: true,
        messages: { orderBy: { seq: 'asc' }, select: { seq: true, payload: true } },
      },
    })
    for (const row of rows) {
      if (resultCache.size >= RESULT_CACHE_MAX) resultCache.delete(resultCache.keys().next().value as string)
      resultCache.set(row.id, { at: row.updatedAt.getTime(), result: caseResult(row) })
    }
  }
  // A session changed between the two reads is shown as replayed (its newer version).
  return sessions.flatMap((s) => {
    const hit = resultCache.get(s.id)
    return hit ? [hit.result] : []
  })
}

export const getDebate = defineOperation({
  name: 'debates.get',
  scope: 'studies:read',
  input: z.object({ experimentId: id, ...pageInput }),
  async run(actor, { experimentId, page, pageSize }) {
    const e = await db.experiment.findFirst({
      where: { id: experimentId, protocol: 'evince' },
      include: { study: { select: { id: true, name: true } } },
    })
    if (!e) throw notFound('Debate')
    const { access } = await requireStudyAccess(db, actor, e.studyId, 'read')
    const config = evinceConfig.parse(e.config)
    const merges = analysisOf(e.analysis).merges
    const resultAliases = { ...config.aliases, ...merges }
    const sessions = await db.protocolSession.findMany({
      where: { experimentId },
      orderBy: { position: 'asc' },
      select: { id: true, position: true, status: true, stopReason: true, stallError: true, updatedAt: true },
    })
    const cases = await caseResults(sessions)
    const counts = { total: cases.length, done: 0, running: 0, awaiting: 0, stalled: 0 }
    for (const s of sessions) counts[s.status as keyof typeof counts]++
    const stops: Record<string, number> = {}
    for (const c of cases) if (c.stopReason) stops[c.stopReason] = (stops[c.stopReason] ?? 0) + 1
    const start = (page - 1) * pageSize
    return {
      experiment: {
        id: e.id,
        name: e.name,
        status: e.status,
        study: e.study,
        createdAt: e.createdAt,
        seats: e.seats,
        sessionsPlanned: e.sessionsPlanned,
        sessionsCreated: e.sessionsCreated,
        prepareError: e.prepareError,
      },
      /** What the actor may do in the debate's study (read, write, manage). */
      access,
      config,
      counts,
      stops,
      merges,
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
  },
})

const Analysis = z.object({ merges: z.record(z.string(), z.string()).default({}) })
const analysisOf = (raw: unknown) => Analysis.catch({ merges: {} }).parse(raw ?? {})

/**
 * Label merges for a run's results (accuracy, confusion): "Obstructive Jaundice" counted as
 * "Jaundice", say. They change how finished debates are scored, never the debates themselves (the
 * stop rule ran with the aliases set up front), so they can be changed at any time.
 */
export const mergeDebateLabels = defineOperation({
  name: 'debates.merge-labels',
  scope: 'studies:update',
  input: z.union([
    z.object({
      experimentId: id,
      from: z.string().trim().min(1, 'Name the label to merge.').max(200),
      into: z.string().trim().min(1, 'Name the label to merge it into.').max(200),
    }),
    z.object({ experimentId: id, clear: z.literal(true) }),
  ]),
  async run(actor, input) {
    const e = await db.experiment.findFirst({ where: { id: input.experimentId, protocol: 'evince' } })
    if (!e) throw notFound('Debate')
    await requireStudyAccess(db, actor, e.studyId, 'write')
    const before = analysisOf(e.analysis)
    const merges = 'clear' in input ? {} : { ...before.merges, [input.from]: input.into }
    if ('from' in input && canonicalLabel(input.from) === canonicalLabel(input.into, merges))
      throw badRequest('A label cannot be merged into itself.', { into: ['Choose another label.'] })
    await db.$transaction(async (tx) => {
      await tx.experiment.update({ where: { id: e.id }, data: { analysis: { ...before, merges } } })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'debate.merge-labels',
        resourceType: 'experiment',
        resourceId: e.id,
        studyId: e.studyId,
        before: { merges: before.merges },
        after: { merges },
      })
    })
    return { experimentId: e.id, merges }
  },
})

function seatName(seat: EvinceSeats['A'], users: Map<string, string>, models: Map<string, string>) {
  return seat.kind === 'human'
    ? `${users.get(seat.userId) ?? 'expert'} (person)`
    : `${seat.generator.model ?? models.get(seat.generator.connectionId) ?? 'default model'}${seat.generator.temperature !== undefined ? ` · T=${seat.generator.temperature}` : ''}`
}

export const viewDebate = defineOperation({
  name: 'debates.view',
  scope: 'work:read-own',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const s = await db.protocolSession.findFirst({
      where: { id: sessionId, protocol: 'evince', ...visibleSessions(actor) },
      include: {
        messages: {
          orderBy: { seq: 'asc' },
          select: { seq: true, payload: true, createdAt: true, authorUserId: true },
        },
        experiment: { select: { id: true, name: true, status: true } },
        study: { select: { id: true, name: true } },
      },
    })
    if (!s) throw notFound('Debate')
    const seats = EvinceSeats.parse(s.seats)
    const { config, instance, state, ask, final } = replayDebate(s)
    const humanIds = [seats.A, seats.B].flatMap((x) => (x.kind === 'human' ? [x.userId] : []))
    const users = new Map(
      (await db.user.findMany({ where: { id: { in: humanIds } }, select: { id: true, name: true } })).map((u) => [
        u.id,
        u.name,
      ]),
    )
    const connectionIds = [
      ...[seats.A, seats.B].flatMap((x) => (x.kind === 'llm' ? [x.generator.connectionId] : [])),
      ...(seats.moderator.kind === 'llm' ? [seats.moderator.judge.connectionId] : []),
    ]
    const models = new Map(
      (
        await db.llmConnection.findMany({
          where: { id: { in: connectionIds } },
          select: { id: true, defaultModel: true },
        })
      ).map((c) => [c.id, c.defaultModel]),
    )
    const mySeat = (['A', 'B'] as const).find((k) => {
      const x = seats[k]
      return x.kind === 'human' && x.userId === actor.userId
    })
    // The ground truth is for people who read the study, never for a debater who only works in it.
    const canSeeTruth =
      hasScope(actor.role, 'work:read-study') && (await studyAccess(actor, s.studyId)).includes('read')
    return {
      id: s.id,
      status: s.status,
      stopReason: s.stopReason,
      stallError: s.stallError,
      experiment: s.experiment,
      study: s.study,
      config,
      symptoms: instance.input.symptoms,
      /** The ground truth is for researchers; a debating expert does not see it. */
      truth: canSeeTruth ? instance.prediction : null,
      seats: {
        A: seatName(seats.A, users, models),
        B: seatName(seats.B, users, models),
        judge:
          seats.moderator.kind === 'llm'
            ? (seats.moderator.judge.model ?? models.get(seats.moderator.judge.connectionId) ?? 'default model')
            : null,
      },
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
      stopLabel: s.stopReason ? (STOP_REASONS[s.stopReason as keyof typeof STOP_REASONS] ?? s.stopReason) : null,
      final,
      finalEntropy: final && state.stop ? entropy(final.crit.map((p) => p.probability)) : null,
      /** The same test the moderator's report prompt uses (lib/tasks/evince-prompts `highEntropy`). */
      highEntropy: final && state.stop ? highEntropy(final.crit) : false,
      report: state.report,
      next: ask.done ? null : { seat: ask.seat, kind: ask.kind, round: ask.round, j: ask.j },
      mySeat: mySeat ?? null,
      myTurn: !ask.done && ask.kind === 'turn' && ask.seat === mySeat,
      pool: state.messages.filter((m): m is TurnMessage => m.kind === 'turn'),
    }
  },
})

export const SubmitDebateTurn = z.object({
  sessionId: id,
  seq: z.coerce.number().int().min(1),
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

export const submitDebateTurn = defineOperation({
  name: 'debates.submit-turn',
  scope: 'work:submit',
  input: SubmitDebateTurn,
  async run(actor, input) {
    const s = await db.protocolSession.findFirst({
      where: { id: input.sessionId, protocol: 'evince', assigneeId: actor.userId },
      include: { messages: { orderBy: { seq: 'asc' }, select: { seq: true, payload: true } } },
    })
    if (!s) throw notFound('Debate')
    const seats = EvinceSeats.parse(s.seats)
    const { config, state, ask } = replayDebate(s)
    if (ask.done) throw conflict('This debate is over; nothing more can be added.')
    const mine = (['A', 'B'] as const).find((k) => {
      const x = seats[k]
      return x.kind === 'human' && x.userId === actor.userId
    })
    if (ask.kind !== 'turn' || ask.seat !== mine || ask.j !== input.seq)
      throw conflict(
        input.seq < ask.j ? 'This turn was already answered (in another tab?).' : 'It is not your turn yet.',
      )
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
    const message = {
      seq: ask.j,
      kind: 'turn' as const,
      sender: mine,
      round: ask.round,
      predictions: input.predictions,
      arguments: input.arguments.filter(Boolean),
      counterArguments: input.counterArguments.filter(Boolean),
    }
    try {
      await appendDebateMessage(state, s.id, message, {
        context: { human: actor.email },
        authorUserId: actor.userId,
        experimentId: s.experimentId,
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('This turn was already answered (in another tab?).')
      throw err
    }
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'debate.human-turn',
      resourceType: 'session',
      resourceId: s.id,
      studyId: s.studyId,
      after: { seq: ask.j, round: ask.round, top: input.predictions[0]?.label },
    })
    // The other debater and the moderator continue on the job queue (the page follows live).
    await enqueueSteps([s.id], s.experimentId, 'evince')
    return { sessionId: s.id, seq: ask.j }
  },
})
