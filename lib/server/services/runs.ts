import { z } from 'zod'
import type { Prisma } from '@/lib/generated/prisma/client'
import type { Actor } from '@/lib/server/actor'
import { db, sql } from '@/lib/server/db'
import { AppError, badRequest, conflict, notFound } from '@/lib/server/errors'
import { workingSessions } from '@/lib/server/engine/jobs'
import { admitSessions, dropQueuedSteps, enqueueSteps } from '@/lib/server/engine/step-queue'
import { hasScope, isRole } from '@/lib/server/auth/roles'
import type { PluginViews, ProtocolPlugin, RunPlan, RunSetup } from '@/lib/server/engine/plugin'
import { allPlugins, pluginFor } from '@/lib/server/engine/plugins'
import { closeIfFinished, sessionEnded } from '@/lib/server/engine/runner'
import { runStarting } from '@/lib/server/engine/schedule'
import { writeRuns } from '@/lib/server/engine/runs'
import {
  LlmRef,
  llmRefs,
  mapLlmRefs,
  SeatChoices,
  Seats,
  seatCycleOf,
  seatProblems,
  withFixedSeats,
} from '@/lib/server/engine/seats'
import { mayTakePart } from '@/lib/server/auth/study-roles'
import { publish } from '@/lib/server/live'
import { defineOperation } from '@/lib/server/operation'
import { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { connectionNames, usableConnection } from '@/lib/server/services/connections'
import { assertImported } from '@/lib/server/services/datasets'
import { id, requireStudyAccess, studiesWhere } from '@/lib/server/services/studies'

/**
 * Runs of every protocol through one set of operations: create (the protocol plugin turns its setup
 * input into config, seats and sessions), list, read with progress, tokens and cost, start, pause,
 * resume, cancel, Retry one or every stalled session, change the model of an LLM seat. Status
 * moves are conditional updates (`where status in …`), so two researchers pressing buttons at once
 * cannot both win; queue work happens after the status row is written, and workers re-read the status
 * before every step, so a paused or cancelled run stops within one message.
 */

export const SESSION_STATUSES = ['queued', 'waiting', 'running', 'awaiting', 'stalled', 'done', 'cancelled'] as const
export const RUN_STATUSES = ['preparing', 'draft', 'running', 'paused', 'done', 'cancelled'] as const

/**
 * A run the actor may read (`need` = read) or change (`write`: run controls, exports), else 404 when
 * they cannot see its study and 403 when they only read it.
 */
export async function findRun(actor: Actor, runId: string, need: 'read' | 'write' = 'read') {
  const e = await db.run.findUnique({ where: { id: runId } })
  if (!e) throw notFound('Run')
  const { access } = await requireStudyAccess(db, actor, e.studyId, need)
  return { ...e, access }
}

// ---------------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------------

export const CreateRunInput = z.looseObject({
  studyId: id,
  protocol: z.string().trim().min(1).max(40),
  /** Start the run at once (default: leave it as a draft). */
  start: z.union([z.boolean(), z.enum(['true', 'false', 'on']).transform((v) => v !== 'false')]).optional(),
  /**
   * At most this many of the run's sessions on the workers at once (the rest wait their turn); none by
   * default. A person's turn is never held back by it.
   */
  maxInFlight: z
    .union([z.literal('').transform(() => undefined), z.coerce.number().int().min(1).max(10_000)])
    .optional(),
  /**
   * Claimable seats: one person never holds two sessions of the same instance of the run (checked
   * when a seat is claimed). Off by default; on for labelling, where an item's sessions are its
   * independent annotations.
   */
  distinctClaimants: z
    .union([z.boolean(), z.enum(['true', 'false', 'on', '']).transform((v) => v === 'true' || v === 'on')])
    .optional(),
  /**
   * An order hint for the work queue: claimable seats of instances with fewer than this many finished
   * sessions first, the instance nearest to it first (complete items to N first). None by default.
   */
  fillFirst: z.union([z.literal('').transform(() => undefined), z.coerce.number().int().min(1).max(10_000)]).optional(),
})

/**
 * The one run-create body of every protocol (besides `studyId`, `protocol` and the run options
 * above): who fills each seat as `SeatFill`s (a list of fills: sessions take them round robin), the
 * protocol's config (checked by its schema), the plugin's own options, and which instances how often.
 */
const count = (max: number) =>
  z.union([z.literal('').transform(() => undefined), z.coerce.number().int().min(1).max(max)]).optional()
export const RunSetupBody = z.object({
  name: z.string({ error: 'Name the run.' }).trim().min(1, 'Name the run.').max(120),
  /** The dataset the sessions run on (EVINCE may type one case in instead, in its options). */
  datasetId: id.optional(),
  seats: SeatChoices,
  config: z.record(z.string(), z.unknown()).default({}),
  options: z.record(z.string(), z.unknown()).default({}),
  repetitions: z.coerce.number().int().min(1).max(50).default(1),
  /** The first `sample` instances of the dataset by index (all when absent). */
  sample: count(100_000),
  /** These instances of the dataset, in this order (instead of `sample`). */
  instanceIds: z.array(id).min(1).max(100_000).optional(),
  /** Shuffle each repetition's instance order, seeded by the repetition number (reproducible). */
  shuffle: boolParam.default(false),
})

/** Zod issues as field errors under `prefix` (`config.k`, `options.templateId` …), and the first message. */
function fieldErrorsOf(error: z.ZodError, prefix: string) {
  const fields: Record<string, string[]> = {}
  for (const i of error.issues) {
    const key = [prefix, ...i.path.map(String)].filter(Boolean).join('.') || prefix || 'input'
    fields[key] = [...(fields[key] ?? []), i.message]
  }
  const first = error.issues[0]
  const at = [prefix, ...(first?.path ?? []).map(String)].filter(Boolean).join('.')
  return { fields, message: `${at ? `${at}: ` : ''}${first?.message ?? 'Invalid input.'}` }
}

/**
 * Every seat of a body checked against the protocol's seat declarations before anything is written:
 * an unknown or missing seat, a kind the seat does not take, an unknown program, a missing helper, a
 * person who is not a member of the study or only reads it, a connection the actor may not use. Each
 * problem is a field error under `seats.<seat>` and its message names the seat.
 */
async function checkSeats(actor: Actor, studyId: string, plugin: ProtocolPlugin, choices: SeatChoices) {
  const problems: Record<string, string[]> = {}
  const add = (seat: string, msg: string) => {
    const key = `seats.${seat}`
    if (!problems[key]?.includes(msg)) problems[key] = [...(problems[key] ?? []), msg]
  }
  const decls = new Map(plugin.protocol.seats.map((d) => [d.name, d]))
  const label = (seat: string) => decls.get(seat)?.label ?? seat
  const variants = seatCycleOf(choices)
  for (const seats of variants)
    for (const [seat, msgs] of Object.entries(seatProblems(plugin.protocol, seats))) for (const m of msgs) add(seat, m)
  const people = new Map<string, Set<string>>()
  const connections = new Map<string, Set<string>>()
  for (const seats of variants)
    for (const [seat, fill] of Object.entries(seats)) {
      if (fill.kind === 'human' && fill.userId)
        people.set(fill.userId, (people.get(fill.userId) ?? new Set()).add(seat))
      for (const ref of llmRefs({ [seat]: fill }))
        connections.set(ref.connectionId, (connections.get(ref.connectionId) ?? new Set()).add(seat))
    }
  if (people.size) {
    const members = await db.studyMember.findMany({
      where: { studyId, userId: { in: [...people.keys()] } },
      select: { userId: true, role: true, user: { select: { role: true, email: true } } },
    })
    const byUser = new Map(members.map((m) => [m.userId, m]))
    for (const [userId, seats] of people) {
      const m = byUser.get(userId)
      for (const seat of seats) {
        if (!m) add(seat, `The person chosen for the ${label(seat)} seat is not a member of the study.`)
        // A viewer of the study (or a viewer account) reads it and never sends a turn (study-roles.ts).
        else if (!isRole(m.user.role) || !mayTakePart(m.user.role, m.role))
          add(
            seat,
            `${m.user.email} only reads this study (a viewer) and cannot fill the ${label(seat)} seat; change their study role first.`,
          )
      }
    }
  }
  for (const [connectionId, seats] of connections) {
    const usable = await usableConnection(actor, connectionId).then(
      () => true,
      (e) => {
        if (e instanceof AppError) return false
        throw e
      },
    )
    if (!usable)
      for (const seat of seats)
        add(seat, `The connection "${connectionId}" of the ${label(seat)} seat is not there, or not yours to use.`)
  }
  if (Object.keys(problems).length) throw badRequest(Object.values(problems).flat()[0] as string, problems)
  return { seats: variants[0] as Seats, seatCycle: variants }
}

export const createRun = defineOperation({
  name: 'runs.create',
  scope: 'studies:update',
  input: CreateRunInput,
  async run(actor, raw) {
    const { studyId, protocol, start, maxInFlight, distinctClaimants, fillFirst, ...rest } = raw
    await requireStudyAccess(db, actor, studyId, 'write')
    const plugin = await pluginFor(protocol).catch(() => {
      throw badRequest(`Unknown protocol "${protocol}".`, { protocol: ['Choose a protocol.'] })
    })
    // A body without seats is the protocol's set-up shape from before the one vocabulary.
    const setupOf = await plugin.setup()
    let body: unknown = rest
    if (!('seats' in rest) && setupOf.legacy)
      body = setupOf.legacy.toRun(setupOf.legacy.input.parse({ ...rest, studyId }))
    // The body, its config and its options are checked together, so a form shows every refused field
    // at once (each beside its field: `repetitions`, `config.n`, `options.templateId` …).
    const parsed = RunSetupBody.safeParse(body)
    const given = (body ?? {}) as { config?: unknown; options?: unknown }
    const parts = [
      { prefix: '', r: parsed },
      {
        prefix: 'config',
        r: (setupOf.config ?? plugin.protocol.config).safeParse(
          parsed.success ? parsed.data.config : (given.config ?? {}),
        ),
      },
      {
        prefix: 'options',
        r: (setupOf.options ?? z.strictObject({})).safeParse(
          parsed.success ? parsed.data.options : (given.options ?? {}),
        ),
      },
    ]
    const fields: Record<string, string[]> = {}
    let message: string | undefined
    for (const { prefix, r } of parts) {
      if (r.success) continue
      const e = fieldErrorsOf(r.error, prefix)
      message ??= e.message
      for (const [k, v] of Object.entries(e.fields)) fields[k] = [...(fields[k] ?? []), ...v]
    }
    if (message !== undefined || !parsed.success) throw new AppError(400, message ?? 'Invalid input.', fields, true)
    const input = parsed.data
    const config = parts[1]?.r.data
    const options = parts[2]?.r.data
    const { seats, seatCycle } = await checkSeats(actor, studyId, plugin, withFixedSeats(plugin.protocol, input.seats))
    const setup: RunSetup = {
      name: input.name,
      ...(input.datasetId ? { datasetId: input.datasetId } : {}),
      seats,
      seatCycle,
      config,
      options,
      repetitions: input.repetitions,
      ...(input.sample ? { sample: input.sample } : {}),
      ...(input.instanceIds ? { instanceIds: input.instanceIds } : {}),
      shuffle: input.shuffle,
    }
    const planned = await setupOf.plan(actor, studyId, setup, {
      async dataset(datasetId: string) {
        const ds = await db.dataset.findFirst({
          where: { id: datasetId, studyId },
          select: { id: true, name: true, kind: true, studyId: true, status: true },
        })
        if (!ds) throw notFound('Dataset')
        assertImported(ds)
        return ds
      },
    })
    // A set-up may plan several runs (one per budget of a curve …): all are written, or none.
    const plans = Array.isArray(planned) ? planned : [planned as RunPlan]
    const runs = await writeRuns(actor, studyId, protocol, plans, (c) => usableConnection(actor, c), {
      start: !!start,
      maxInFlight,
      distinctClaimants,
      fillFirst,
    })
    const created = runs[0] as (typeof runs)[number]
    const first = created.preparing
      ? null
      : await db.protocolSession.findFirst({
          where: { runId: created.id },
          orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
          select: { id: true },
        })
    return {
      id: created.id,
      sessions: created.sessions,
      preparing: created.preparing,
      protocol,
      started: !!start && !created.preparing,
      firstSessionId: first?.id ?? null,
      runs: runs.map((r) => ({ id: r.id, name: r.name, sessions: r.sessions, preparing: r.preparing })),
    }
  },
})

// ---------------------------------------------------------------------------------------------
// Read
// ---------------------------------------------------------------------------------------------

export interface RunCounts {
  total: number
  queued: number
  waiting: number
  running: number
  awaiting: number
  stalled: number
  done: number
  cancelled: number
  calls: number
  failedCalls: number
  tokensIn: number
  tokensOut: number
  costUsd: number
}

/** Session counts by status and the LLM usage of a run, in one SQL statement. */
export async function runCounts(runId: string): Promise<RunCounts> {
  const { rows } = await sql().query<{
    by: Record<string, number> | null
    calls: string
    failed: string
    tin: string | null
    tout: string | null
    cost: number | null
  }>(
    `SELECT (SELECT json_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM "ProtocolSession"
              WHERE "runId" = $1 GROUP BY status) x) AS by,
            count(c.id) AS calls, count(c.id) FILTER (WHERE c.status <> 'ok') AS failed,
            sum(c."tokensIn") AS tin, sum(c."tokensOut") AS tout, sum(c."costUsd") AS cost
     FROM "LlmCall" c
     WHERE c."sessionRef" IN (SELECT s.id FROM "ProtocolSession" s WHERE s."runId" = $1)`,
    [runId],
  )
  const r = rows[0]
  const by = r?.by ?? {}
  const n = (s: string) => Number(by[s] ?? 0)
  // "Running" is a queued session a worker has now (an active job); the rest wait their turn.
  const running = (await workingSessions({ runIds: [runId] })).get(runId)?.size ?? 0
  return {
    total: Object.values(by).reduce((a, b) => a + Number(b), 0),
    queued: Math.max(0, n('queued') - running),
    waiting: n('waiting'),
    running,
    awaiting: n('awaiting'),
    stalled: n('stalled'),
    done: n('done'),
    cancelled: n('cancelled'),
    calls: Number(r?.calls ?? 0),
    failedCalls: Number(r?.failed ?? 0),
    tokensIn: Number(r?.tin ?? 0),
    tokensOut: Number(r?.tout ?? 0),
    costUsd: Number(r?.cost ?? 0),
  }
}

/**
 * What blocks a run, in words (null when nothing does): a running run whose open sessions all wait
 * for people or stalled makes no progress by itself, and says so.
 */
export function blockedBy(
  status: string,
  c: Pick<RunCounts, 'queued' | 'running' | 'waiting' | 'awaiting' | 'stalled'>,
) {
  if (status !== 'running') return null
  if (c.queued + c.running > 0) return null
  if (c.stalled > 0)
    return {
      kind: 'stalled' as const,
      message: `${c.stalled} session${c.stalled === 1 ? '' : 's'} stalled${c.waiting ? ` (${c.waiting} more wait behind ${c.stalled === 1 ? 'it' : 'them'})` : ''}.`,
    }
  if (c.awaiting > 0)
    return {
      kind: 'people' as const,
      message: `Waiting for people: ${c.awaiting} session${c.awaiting === 1 ? '' : 's'} awaiting an answer.`,
    }
  return null
}

/** A page of runs (any protocol) with session counts by status, in two statements. */
export async function runPage(where: Prisma.RunWhereInput, page: number, pageSize: number) {
  const [items, total] = await Promise.all([
    db.run.findMany({
      where,
      orderBy: { createdAt: 'desc' },
      select: {
        id: true,
        name: true,
        protocol: true,
        task: true,
        status: true,
        repetitions: true,
        createdAt: true,
        study: { select: { id: true, name: true } },
      },
      ...skipTake(page, pageSize),
    }),
    db.run.count({ where }),
  ])
  const ids = items.map((e) => e.id)
  const counts = ids.length
    ? (
        await sql().query<{ runId: string; status: string; n: number }>(
          `SELECT "runId", status, count(*)::int AS n FROM "ProtocolSession"
           WHERE "runId" = ANY($1) GROUP BY "runId", status`,
          [ids],
        )
      ).rows
    : []
  const labels = new Map((await allPlugins()).map((p) => [p.protocol.id, p.protocol.label]))
  const working = ids.length ? await workingSessions({ runIds: ids }) : new Map<string, Set<string>>()
  return pageOf(
    items.map((e) => {
      const c = { queued: 0, waiting: 0, running: 0, awaiting: 0, stalled: 0, done: 0, cancelled: 0 }
      for (const r of counts) if (r.runId === e.id) c[r.status as keyof typeof c] = r.n
      c.running = working.get(e.id)?.size ?? 0
      c.queued = Math.max(0, c.queued - c.running)
      const sessions = Object.values(c).reduce((a, b) => a + b, 0)
      return {
        ...e,
        protocolLabel: labels.get(e.protocol) ?? e.protocol,
        sessions,
        done: c.done,
        stalled: c.stalled,
        awaiting: c.awaiting,
        blocked: blockedBy(e.status, c)?.kind ?? null,
      }
    }),
    total,
    page,
    pageSize,
  )
}

export const listRuns = defineOperation({
  name: 'runs.list',
  scope: 'studies:read',
  input: z.object({
    ...pageInput,
    studyId: id.optional(),
    protocol: z.string().trim().max(40).optional(),
    status: z.enum(RUN_STATUSES).optional(),
  }),
  async run(actor, { page, pageSize, studyId, protocol, status }) {
    if (studyId) await requireStudyAccess(db, actor, studyId, 'read')
    return runPage(
      {
        study: studiesWhere(actor, 'read'),
        ...(studyId ? { studyId } : {}),
        ...(protocol ? { protocol } : {}),
        ...(status ? { status } : {}),
      },
      page,
      pageSize,
    )
  },
})

export const getRun = defineOperation({
  name: 'runs.get',
  scope: 'studies:read',
  input: z.object({
    runId: id,
    ...pageInput,
    status: z.enum(SESSION_STATUSES).optional(),
    repetition: z.coerce.number().int().min(1).max(1000).optional(),
  }),
  async run(actor, { runId, page, pageSize, status, repetition }) {
    const run = await db.run.findUnique({
      where: { id: runId },
      include: { study: { select: { id: true, name: true } } },
    })
    if (!run) throw notFound('Run')
    const { access } = await requireStudyAccess(db, actor, run.studyId, 'read')
    const plugin = await pluginFor(run.protocol)
    const [views, exportsOf] = await Promise.all([plugin.views(), plugin.exports?.()])
    const working = (await workingSessions({ runIds: [runId] })).get(runId) ?? new Set<string>()
    const where: Prisma.ProtocolSessionWhereInput = {
      runId: runId,
      // "running" = queued sessions a worker has now; "queued" = the others.
      ...(status === 'running'
        ? { status: 'queued', id: { in: [...working] } }
        : status === 'queued'
          ? { status, id: { notIn: [...working] } }
          : status
            ? { status }
            : {}),
      ...(repetition ? { repetition } : {}),
    }
    const now = Date.now()
    const [sessions, total, counts, dataset, lastStall] = await Promise.all([
      db.protocolSession.findMany({
        where,
        orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
        select: {
          id: true,
          repetition: true,
          position: true,
          status: true,
          awaitingSeat: true,
          stopReason: true,
          stallError: true,
          retryCount: true,
          instanceId: true,
          updatedAt: true,
          people: {
            select: {
              seat: true,
              claimable: true,
              leaseUntil: true,
              user: { select: { id: true, name: true, email: true } },
            },
          },
          _count: { select: { messages: true } },
        },
        ...skipTake(page, pageSize),
      }),
      db.protocolSession.count({ where }),
      runCounts(runId),
      db.dataset.findUnique({ where: { id: run.datasetId }, select: { id: true, name: true, kind: true } }),
      db.protocolSession.findFirst({
        where: { runId: runId, status: 'stalled' },
        orderBy: { updatedAt: 'desc' },
        select: { id: true, stallError: true, retryCount: true, updatedAt: true },
      }),
    ])
    const seatDecls = plugin.protocol.seats.map((d) => ({ name: d.name, label: d.label, kinds: [...d.kinds] }))
    const parsedSeats = Seats.safeParse(run.seats)
    const [connections, stallCall] = await Promise.all([
      connectionNames(parsedSeats.success ? llmRefs(parsedSeats.data) : []),
      // The model whose call failed in the last stall: what Change model offers to replace first.
      lastStall
        ? db.llmCall.findFirst({
            where: { sessionRef: lastStall.id, status: { not: 'ok' } },
            orderBy: { createdAt: 'desc' },
            select: { connectionId: true, modelRequested: true },
          })
        : null,
    ])
    // Session pages need work:read-own, and someone else's session work:read-study (sessions.get):
    // a viewer account reads the run but is offered no link that would answer 403.
    const readsSessions = hasScope(actor.role, 'work:read-own') && hasScope(actor.role, 'work:read-study')
    const opensOwn = hasScope(actor.role, 'work:read-own')
    return {
      run: { ...run, protocolLabel: plugin.protocol.label },
      /** What the actor may do in the run's study (read, write, manage): pages hide what would be refused. */
      access,
      /**
       * The links the actor can follow from the run's pages: every session's page (`openSessions`; a
       * session they sit in is marked `open` on its row either way) and the inspector.
       */
      can: { openSessions: readsSessions, inspect: hasScope(actor.role, 'work:read-study') },
      /** The connections the run's seats use, by id, to name each seat's model and connection. */
      connections,
      lastStallCall: stallCall?.connectionId
        ? { connectionId: stallCall.connectionId, model: stallCall.modelRequested }
        : null,
      seatDecls,
      dataset,
      counts,
      blocked: blockedBy(run.status, counts),
      lastStall,
      exports: [
        ...['d', 'm', 'c'].map((t) => ({
          table: t,
          label: { d: 'D: sessions', m: 'M: messages', c: 'C: contexts' }[t] as string,
        })),
        ...Object.entries(exportsOf?.tables ?? {}).map(([table, e]) => ({ table, label: e.label })),
      ],
      files: Object.entries(exportsOf?.files ?? {}).map(([file, f]) => ({ file, label: f.label })),
      hasDashboard: !!views.dashboard,
      sessions: pageOf(
        sessions.map(({ _count, people, ...s }) => ({
          ...s,
          // A claim whose lease lapsed (in an open session) holds the seat no longer: shown open.
          people: people.map(({ leaseUntil, ...p }) =>
            leaseUntil && leaseUntil.getTime() <= now && s.status !== 'done' && s.status !== 'cancelled'
              ? { ...p, user: null }
              : p,
          ),
          status: s.status === 'queued' && working.has(s.id) ? 'running' : s.status,
          messages: _count.messages,
          /** The actor can open this session's page. */
          open: readsSessions || (opensOwn && people.some((p) => p.user?.id === actor.userId)),
        })),
        total,
        page,
        pageSize,
      ),
    }
  },
})

/** The protocol's part of the run page (results, accuracy …). */
export const viewRun = defineOperation({
  name: 'runs.view',
  scope: 'studies:read',
  input: z.object({ runId: id, args: z.record(z.string().max(60), z.string().max(500).optional()).default({}) }),
  async run(actor, { runId, args }) {
    const run = await findRun(actor, runId)
    const views = await (await pluginFor(run.protocol)).views()
    return { protocol: run.protocol, data: views.run ? await views.run(runId, args) : null }
  },
})

/** The protocol's dashboard (intelligibility, clemscore …). */
export const runDashboard = defineOperation({
  name: 'runs.dashboard',
  scope: 'dashboards:read',
  input: z.object({ runId: id, args: z.record(z.string().max(60), z.string().max(500).optional()).default({}) }),
  async run(actor, { runId, args }) {
    const run = await findRun(actor, runId)
    const views = await (await pluginFor(run.protocol)).views()
    if (!views.dashboard) throw notFound('Dashboard')
    return {
      protocol: run.protocol,
      run: { id: run.id, name: run.name, status: run.status },
      data: await views.dashboard(runId, args),
    }
  },
})

/** What a run of this plugin compares with (`views.comparableAs`; default: its task). */
function comparableAs(views: PluginViews, run: { task: string; config: unknown }) {
  return views.comparableAs?.(run) ?? { key: run.task, label: run.task }
}

/**
 * The runs the compare page offers: the actor's readable runs of protocols that have a comparison,
 * newest first, each with what it compares with (`comparable.key`: two runs compare only when their
 * protocol and key are equal, e.g. PXP on the same task).
 */
export const compareChoices = defineOperation({
  name: 'runs.compare-choices',
  scope: 'dashboards:read',
  input: z.object({}),
  async run(actor) {
    const withViews = await Promise.all((await allPlugins()).map(async (p) => ({ p, views: await p.views() })))
    const plugins = withViews.filter(({ views }) => views.compare)
    if (!plugins.length) return []
    const byId = new Map(plugins.map((x) => [x.p.protocol.id, x]))
    const runs = await db.run.findMany({
      where: { study: studiesWhere(actor, 'read'), protocol: { in: [...byId.keys()] } },
      orderBy: { createdAt: 'desc' },
      take: 200,
      select: {
        id: true,
        name: true,
        protocol: true,
        task: true,
        config: true,
        study: { select: { id: true, name: true } },
      },
    })
    return runs.map(({ config, ...r }) => {
      const { p, views } = byId.get(r.protocol) as { p: ProtocolPlugin; views: PluginViews }
      return { ...r, protocolLabel: p.protocol.label, comparable: comparableAs(views, { task: r.task, config }) }
    })
  },
})

/**
 * Two runs side by side: both must be readable by the actor, of one protocol, and comparable by the
 * protocol's rule (`views.comparableAs`: PXP on the same task); the protocol's plugin computes the
 * comparison (`views.compare`), so this page works for every protocol that has one.
 */
export const compareRuns = defineOperation({
  name: 'runs.compare',
  scope: 'dashboards:read',
  input: z.object({ a: id, b: id }),
  async run(actor, { a, b }) {
    const [runA, runB] = await Promise.all([findRun(actor, a), findRun(actor, b)])
    if (runA.protocol !== runB.protocol)
      throw badRequest('Only runs of the same protocol can be compared.', { b: ['Choose a run of the same protocol.'] })
    const views = await (await pluginFor(runA.protocol)).views()
    if (!views.compare) throw notFound('Comparison')
    const [ofA, ofB] = [comparableAs(views, runA), comparableAs(views, runB)]
    if (ofA.key !== ofB.key)
      throw badRequest(`These runs do not compare: A runs on ${ofA.label}, B on ${ofB.label}.`, {
        b: [`Choose a run on ${ofA.label}.`],
      })
    const ref = (r: typeof runA) => ({ id: r.id, name: r.name, status: r.status, studyId: r.studyId })
    return { protocol: runA.protocol, a: ref(runA), b: ref(runB), data: await views.compare(a, b) }
  },
})

// ---------------------------------------------------------------------------------------------
// Run controls
// ---------------------------------------------------------------------------------------------

async function move(
  actor: Actor,
  runId: string,
  from: string[],
  to: string,
  action: string,
  refusal: (status: string) => string,
) {
  const e = await findRun(actor, runId, 'write')
  const moved = await db.$transaction(async (tx) => {
    const r = await tx.run.updateMany({ where: { id: e.id, status: { in: from } }, data: { status: to } })
    if (r.count !== 1) return false
    await writeAudit(tx, {
      actor: actorRef(actor),
      action,
      resourceType: 'run',
      resourceId: e.id,
      studyId: e.studyId,
      before: { status: e.status },
      after: { status: to },
    })
    return true
  })
  if (!moved) {
    const now = await db.run.findUniqueOrThrow({ where: { id: e.id }, select: { status: true } })
    throw conflict(refusal(now.status))
  }
  await publish(`run:${e.id}`, { type: 'progress' })
  return e
}

const RunRef = z.object({ runId: id })

async function startRunNow(actor: Actor, runId: string) {
  await move(actor, runId, ['draft'], 'running', 'run.start', (s) =>
    s === 'paused'
      ? 'The run is paused: resume it instead.'
      : s === 'preparing'
        ? 'The run is still creating its sessions; it can start once they are all there.'
        : `The run is already ${s}.`,
  )
  return { runId, enqueued: await enqueueRunnable(runId) }
}

/**
 * Queues a step for every session of the run that can act now (up to its limit of sessions in flight);
 * closes the run if none is left.
 */
async function enqueueRunnable(runId: string) {
  await runStarting(runId)
  const queued = await admitSessions(runId)
  await closeIfFinished(runId)
  return queued
}

export const startRun = defineOperation({
  name: 'runs.start',
  scope: 'studies:update',
  input: RunRef,
  run: (actor, { runId }) => startRunNow(actor, runId),
})

export const pauseRun = defineOperation({
  name: 'runs.pause',
  scope: 'studies:update',
  input: RunRef,
  async run(actor, { runId }) {
    await move(
      actor,
      runId,
      ['running'],
      'paused',
      'run.pause',
      (s) => `Only a running run can be paused; this one is ${s}.`,
    )
    return { runId, status: 'paused' as const }
  },
})

export const resumeRun = defineOperation({
  name: 'runs.resume',
  scope: 'studies:update',
  input: RunRef,
  async run(actor, { runId }) {
    await move(
      actor,
      runId,
      ['paused'],
      'running',
      'run.resume',
      (s) => `Only a paused run can be resumed; this one is ${s}.`,
    )
    return { runId, enqueued: await enqueueRunnable(runId) }
  },
})

export const cancelRun = defineOperation({
  name: 'runs.cancel',
  scope: 'studies:update',
  input: RunRef,
  async run(actor, { runId }) {
    await move(
      actor,
      runId,
      ['preparing', 'draft', 'running', 'paused'],
      'cancelled',
      'run.cancel',
      (s) => `The run is already ${s}.`,
    )
    // Its queued steps go; a step already running is stopped by its ctx.signal (appending nothing).
    const droppedJobs = await dropQueuedSteps(runId)
    const { rows: ended } = await sql().query<{
      id: string
      studyId: string
      runId: string | null
      protocol: string
    }>(
      `UPDATE "ProtocolSession" SET status = 'cancelled', "awaitingSeat" = NULL, "updatedAt" = now()
       WHERE "runId" = $1 AND status NOT IN ('done', 'cancelled')
       RETURNING id, "studyId", "runId", protocol`,
      [runId],
    )
    // A step still working sees the cancel within WATCH_INTERVAL_MS (its ctx.signal aborts).
    for (const s of ended) await sessionEnded(s, 'cancelled')
    return { runId, status: 'cancelled' as const, droppedJobs }
  },
})

/** Stalled sessions go back to the queue; a paused run picks them up on resume. */
async function retry(actor: Actor, where: Prisma.ProtocolSessionWhereInput, studyId: string, resourceId: string) {
  const stalled = await db.protocolSession.findMany({
    where: { ...where, status: 'stalled' },
    select: { id: true, runId: true, stallError: true, run: { select: { status: true } } },
  })
  if (!stalled.length) return []
  const ids = stalled.map((s) => s.id)
  const moved = await db.$transaction(async (tx) => {
    const r = await tx.$queryRaw<Array<{ id: string }>>`
      UPDATE "ProtocolSession" SET status = 'queued', "retryCount" = "retryCount" + 1, "updatedAt" = now()
      WHERE id = ANY(${ids}) AND status = 'stalled' RETURNING id`
    if (!r.length) return []
    await writeAudit(tx, {
      actor: actorRef(actor),
      action: 'session.retry',
      resourceType: ids.length === 1 ? 'session' : 'run',
      resourceId,
      studyId,
      before: {
        status: 'stalled',
        errors: stalled
          .filter((s) => r.some((x) => x.id === s.id))
          .map((s) => s.stallError)
          .slice(0, 20),
      },
      after: { status: 'queued', sessions: r.length },
    })
    return r.map((x) => x.id)
  })
  const byRun = new Map<string | null, string[]>()
  for (const s of stalled)
    if (moved.includes(s.id) && (!s.runId || s.run?.status === 'running'))
      byRun.set(s.runId, [...(byRun.get(s.runId) ?? []), s.id])
  for (const [runId, sessionIds] of byRun) {
    if (runId) await admitSessions(runId)
    else await enqueueSteps(sessionIds, runId)
  }
  return moved
}

export const retrySession = defineOperation({
  name: 'runs.retry-session',
  scope: 'studies:update',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const s = await db.protocolSession.findUnique({
      where: { id: sessionId },
      select: { id: true, studyId: true, status: true, run: { select: { status: true } } },
    })
    if (!s) throw notFound('Session')
    await requireStudyAccess(db, actor, s.studyId, 'write')
    const moved = await retry(actor, { id: s.id }, s.studyId, s.id)
    if (!moved.length) throw conflict('Only a stalled session can be retried; this one has moved on.')
    return { sessionId: s.id, enqueued: !s.run || s.run.status === 'running' }
  },
})

export const retryStalled = defineOperation({
  name: 'runs.retry-stalled',
  scope: 'studies:update',
  input: RunRef,
  async run(actor, { runId }) {
    const e = await findRun(actor, runId, 'write')
    const moved = await retry(actor, { runId: e.id }, e.studyId, e.id)
    if (!moved.length) throw conflict('No session of this run is stalled.')
    return { runId, retried: moved.length, enqueued: e.status === 'running' }
  },
})

/** Where an LLM reference sits in a run's seats: a seat's own model (helper null) or a named helper. */
type RefPlace = { seat: string; helper: string | null }

/**
 * Change the model of an LLM seat (or of one of its helpers) for the run and its unfinished sessions,
 * e.g. after the model of a stalled run was retired; or, with `from`, of every seat and helper that
 * uses a connection (and that model of it, when given), in one action. Each reference keeps its own
 * temperature and image setting unless the new choice sets them (a checker at temperature 0 stays at
 * 0), and names its model (a connection's default is resolved now). With `retry`, the run's stalled
 * sessions are queued again right after, so one submit un-stalls a run whose new model works.
 * Finished sessions keep the model they ran with.
 */
export const changeSeatModel = defineOperation({
  name: 'runs.change-seat-model',
  scope: 'studies:update',
  input: z
    .object({
      runId: id,
      seat: z.string().trim().min(1).max(60).optional(),
      /** A helper of the seat (e.g. "checker"); the seat's own model when absent. */
      helper: z.string().trim().min(1).max(60).optional(),
      /** Instead of one seat: every seat and helper using this connection (and model, when given). */
      from: z.object({ connectionId: id, model: z.string().trim().min(1).max(200).optional() }).optional(),
      model: LlmRef,
      /** Queue the run's stalled sessions again once the model has changed. */
      retry: z.boolean().default(false),
    })
    .refine((v) => !!v.seat !== !!v.from, {
      message: 'Choose a seat, or a connection whose seats all change.',
      path: ['seat'],
    }),
  async run(actor, { runId, seat, helper, from, model: chosen, retry: retryStalledToo }) {
    const e = await findRun(actor, runId, 'write')
    if (e.status === 'done' || e.status === 'cancelled')
      throw conflict(`The run is ${e.status}; its seats cannot change.`)
    const target = await usableConnection(actor, chosen.connectionId)
    const seats = Seats.parse(e.seats)
    if (seat) {
      const fill = seats[seat]
      if (!fill) throw badRequest(`This run has no seat "${seat}".`, { seat: ['Choose a seat of the run.'] })
      if (helper ? fill.kind === 'human' || !fill.helpers[helper] : fill.kind !== 'llm')
        throw badRequest(
          helper ? `The ${seat} seat has no helper "${helper}".` : `The ${seat} seat is not filled by an LLM.`,
        )
    }
    // The default model of the connection being replaced, for references that do not name theirs.
    const fromDefault = from
      ? ((await db.llmConnection.findUnique({ where: { id: from.connectionId }, select: { defaultModel: true } }))
          ?.defaultModel ?? null)
      : null
    const matches = (ref: LlmRef, at: RefPlace) =>
      from
        ? ref.connectionId === from.connectionId && (!from.model || (ref.model || fromDefault) === from.model)
        : at.seat === seat && at.helper === (helper ?? null)
    const replacement = (old: LlmRef): LlmRef => ({
      ...(old.temperature !== undefined ? { temperature: old.temperature } : {}),
      ...(old.vision !== undefined ? { vision: old.vision } : {}),
      ...chosen,
      model: chosen.model || target.defaultModel,
    })
    const changed: Array<RefPlace & { before: LlmRef; after: LlmRef }> = []
    const swap = (all: Seats, record: boolean) =>
      mapLlmRefs(all, (ref, s, h) => {
        if (!matches(ref, { seat: s, helper: h })) return ref
        const after = replacement(ref)
        if (record) changed.push({ seat: s, helper: h, before: ref, after })
        return after
      })
    const runSeats = swap(seats, true)
    if (from && !changed.length)
      throw badRequest('No seat of this run uses that connection.', { from: ['Choose a connection the run uses.'] })
    const n = await db.$transaction(async (tx) => {
      await tx.run.update({ where: { id: e.id }, data: { seats: runSeats as Prisma.InputJsonValue } })
      // Sessions may hold seat variants (people round robin): each distinct set of seats is rewritten
      // once, by value, so a large run takes a few statements, not one per session.
      const variants = await tx.$queryRaw<Array<{ seats: unknown }>>`
        SELECT DISTINCT seats FROM "ProtocolSession"
        WHERE "runId" = ${e.id} AND status NOT IN ('done', 'cancelled')`
      let n = 0
      for (const v of variants) {
        const parsed = Seats.safeParse(v.seats)
        if (!parsed.success) continue
        const next = swap(parsed.data, false)
        if (JSON.stringify(next) === JSON.stringify(parsed.data)) continue
        n += await tx.$executeRaw`
          UPDATE "ProtocolSession" SET seats = ${JSON.stringify(next)}::jsonb, "updatedAt" = now()
          WHERE "runId" = ${e.id} AND status NOT IN ('done', 'cancelled')
            AND seats = ${JSON.stringify(v.seats)}::jsonb`
      }
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'run.change-seat-model',
        resourceType: 'run',
        resourceId: e.id,
        studyId: e.studyId,
        before: {
          seat,
          helper,
          from,
          models: changed.map((c) => ({ seat: c.seat, helper: c.helper, model: c.before })),
        },
        after: { models: changed.map((c) => ({ seat: c.seat, helper: c.helper, model: c.after })), sessions: n },
      })
      return n
    })
    const retried = retryStalledToo ? await retry(actor, { runId: e.id }, e.studyId, e.id) : []
    await publish(`run:${e.id}`, { type: 'progress' })
    return {
      runId,
      seat: seat ?? null,
      helper: helper ?? null,
      changed: changed.map(({ seat, helper, after }) => ({ seat, helper, model: after })),
      sessions: n,
      retried: retried.length,
    }
  },
})
