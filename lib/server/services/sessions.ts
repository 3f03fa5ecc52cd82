import type pg from 'pg'
import { z } from 'zod'
import type { Prisma } from '@/lib/generated/prisma/client'
import { type Ask, type BaseMessage, ProtocolError } from '@/lib/protocols/types'
import type { Actor } from '@/lib/server/actor'
import { hasScope, type Role } from '@/lib/server/auth/roles'
import { mayTakePart, studyPermissions, takePartStudyRoles } from '@/lib/server/auth/study-roles'
import { settings } from '@/lib/server/config'
import { db, pgTransaction, sql } from '@/lib/server/db'
import { AppError, badRequest, conflict, forbidden, isUniqueViolation, notFound } from '@/lib/server/errors'
import { workingSessions } from '@/lib/server/engine/jobs'
import type { StepSession } from '@/lib/server/engine/plugin'
import { enqueueSteps } from '@/lib/server/engine/step-queue'
import { allPlugins, pluginFor, sessionTitle } from '@/lib/server/engine/plugins'
import {
  afterSessionDone,
  sessionEnded,
  appendMessage,
  type Exec,
  humanSeatAsked,
  loadSession,
  notifyAppended,
  prepare,
} from '@/lib/server/engine/runner'
import { kindLabel, llmRefs, Seats } from '@/lib/server/engine/seats'
import { publishSession } from '@/lib/server/live'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf } from '@/lib/server/pagination'
import { actorRef, writeAuditSql } from '@/lib/server/audit'
import { connectionNames } from '@/lib/server/services/connections'
import { id, requireStudyAccess, studiesWhere } from '@/lib/server/services/studies'

/**
 * Sessions of every protocol as people meet them: the one work queue (everything awaiting the
 * signed-in person, seats they may claim), the session page, a person's turn (validated by the
 * protocol's plugin, appended and audited in one transaction, then the next step is queued), claiming
 * a seat, and the researcher's D/M/C inspector.
 */

/**
 * Sessions an actor may open: those they fill a seat in; with work:read-study also those of the
 * studies they may read (an expert or annotator study role reads no one else's).
 */
export function visibleSessions(actor: Actor): Prisma.ProtocolSessionWhereInput {
  const own = { people: { some: { userId: actor.userId } } }
  return hasScope(actor.role, 'work:read-study') ? { OR: [own, { study: studiesWhere(actor, 'read') }] } : own
}

// ---------------------------------------------------------------------------------------------
// Seat leases
// ---------------------------------------------------------------------------------------------

/**
 * A claim of a claimable seat is a lease (`SessionSeat.leaseUntil`): renewed while the person works
 * (`sessions.heartbeat`, each turn), and free again once it lapses. Lapsing is decided when read, by
 * these SQL conditions, everywhere (the queue, a claim, a turn, the session page): nothing reaps
 * claims. Only an open session's claims lapse; a finished session keeps who sat where.
 */
export const lapsedSql = (p = 'p', s = 's') =>
  `(${p}."leaseUntil" IS NOT NULL AND ${p}."leaseUntil" <= now() AND ${s}.status NOT IN ('done', 'cancelled'))`
/** The seat is held (named, or claimed and not lapsed) by the user in the SQL parameter `user`. */
export const holdsSql = (user: string, p = 'p', s = 's') => `(${p}."userId" = ${user} AND NOT ${lapsedSql(p, s)})`
/** No one holds the seat: never claimed, given back, or its lease lapsed. */
export const freeSql = (p = 'p', s = 's') => `(${p}."userId" IS NULL OR ${lapsedSql(p, s)})`

/** How long a claim lasts without a renewal (PARLEY_SEAT_LEASE_SECONDS, 900 by default). */
export const leaseSeconds = () => settings(['PARLEY_SEAT_LEASE_SECONDS']).seatLeaseSeconds

// ---------------------------------------------------------------------------------------------
// The work queue
// ---------------------------------------------------------------------------------------------

export const QUEUE_FILTERS = ['yours', 'others', 'waiting', 'stalled', 'done', 'claimable'] as const

type QueueRow = {
  id: string
  protocol: string
  status: string
  awaitingSeat: string | null
  seat: string
  claimable: boolean
  mine: boolean
  task: string
  instance: unknown
  repetition: number
  position: number
  updatedAt: Date
  studyId: string
  studyName: string
  runId: string | null
  runName: string | null
  messages: number
}

/** The session a waiting session waits for (the first unfinished one before it in its repetition). */
type Blocker = {
  id: string
  status: string
  position: number
  task: string
  instance: unknown
  protocol: string
  /** The person fills a seat of it. */
  mine: boolean
  /** It is the person's turn in it. */
  yours: boolean
}

/**
 * The rows of a person's work queue ($1 the person, $2 the study roles under which they take part):
 * their seats, plus the unclaimed claimable seats of open sessions in studies they take part in, each
 * with its group (`grp`: yours, claimable, waiting, stalled, done, others) and, under a run's order hint,
 * how many sessions of its instance are finished. Shared by the queue and "Next session" (exported for
 * the test of its plan: its per-seat lookups of an instance's sessions go by ("runId", "instanceId")).
 */
export function queueBaseSql(): string {
  return `
      SELECT s.id, s.protocol, s.status, s."awaitingSeat", p.seat, p.claimable, COALESCE(${holdsSql('$1')}, false) AS mine, s.task,
             s.instance, s.repetition, s.position, s."updatedAt", s."studyId", st.name AS "studyName",
             e.id AS "runId", e.name AS "runName", e."fillFirst",
             (SELECT count(*)::int FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS messages,
             -- With the run's order hint: how many sessions of this session's instance are finished.
             CASE WHEN e."fillFirst" IS NOT NULL AND ${freeSql()} THEN
               (SELECT count(*)::int FROM "ProtocolSession" s3
                WHERE s3."runId" = s."runId" AND s3."instanceId" = s."instanceId" AND s3.status = 'done')
             END AS "instanceDone",
             CASE
               WHEN ${holdsSql('$1')} AND s.status = 'awaiting' AND s."awaitingSeat" = p.seat THEN 'yours'
               WHEN ${freeSql()} THEN 'claimable'
               WHEN s.status = 'waiting' THEN 'waiting'
               WHEN s.status = 'stalled' THEN 'stalled'
               WHEN s.status IN ('done', 'cancelled') THEN 'done'
               ELSE 'others'
             END AS grp
      FROM "SessionSeat" p
      JOIN "ProtocolSession" s ON s.id = p."sessionId"
      JOIN "Study" st ON st.id = s."studyId" AND st."archivedAt" IS NULL
      LEFT JOIN "Run" e ON e.id = s."runId"
      WHERE (${holdsSql('$1')}
             OR (${freeSql()} AND p.claimable AND s.status NOT IN ('done', 'cancelled')
                 AND EXISTS (SELECT 1 FROM "StudyMember" sm
                             WHERE sm."studyId" = s."studyId" AND sm."userId" = $1 AND sm.role = ANY($2::text[]))
                 -- A run with distinct claimants never offers a second slot of an item the person took.
                 AND NOT (COALESCE(e."distinctClaimants", false) AND ${sameInstanceTakenSql('s', '$1')})))`
}

/**
 * A run's order hint (fillFirst N): seats of instances with fewer than N finished sessions first, the
 * instance nearest to N first among them (complete items to N first); the others (N reached, or no
 * hint) after, in the usual order. Over queue rows (`queueBaseSql`).
 */
const FILL_FIRST_ORDER = `CASE WHEN grp = 'claimable' AND "instanceDone" < "fillFirst" THEN "instanceDone" END DESC NULLS LAST`

/**
 * SQL true when person `user` holds, or has worked on, another session of the same instance of the
 * same run as session `me` (what a run with distinct claimants refuses to give them).
 */
function sameInstanceTakenSql(me: string, user: string): string {
  return `EXISTS (SELECT 1 FROM "ProtocolSession" o
                 WHERE o."runId" = ${me}."runId" AND o."instanceId" = ${me}."instanceId" AND o.id <> ${me}.id
                   AND (EXISTS (SELECT 1 FROM "SessionSeat" p WHERE p."sessionId" = o.id AND ${holdsSql(user, 'p', 'o')})
                        OR EXISTS (SELECT 1 FROM "ProtocolMessage" m WHERE m."sessionId" = o.id AND m."authorUserId" = ${user})))`
}

/**
 * The signed-in person's queue across protocols: sessions whose turn is theirs first (the run whose
 * session waited longest first, its sessions by position), then their other open sessions, sessions
 * waiting for an earlier one of their chain (naming it: "waiting for your session …"), stalled, done;
 * and seats they may claim. Counts per group.
 */
export const myQueue = defineOperation({
  name: 'sessions.queue',
  scope: 'work:read-own',
  input: z.object({ ...pageInput, filter: z.enum(QUEUE_FILTERS).optional() }),
  async run(actor, { page, pageSize, filter }) {
    // The study roles under which this person takes part (none without work:submit; never viewer).
    const claimAs = takePartStudyRoles(actor.role)
    // One statement: my seats, plus the unclaimed claimable seats of studies I take part in.
    const base = queueBaseSql()
    const counts = await sql().query<{ grp: string; n: number }>(
      `SELECT grp, count(*)::int AS n FROM (${base}) q GROUP BY grp`,
      [actor.userId, claimAs],
    )
    // Progress through a run: of this person's sessions in the row's run, how many are done.
    const { rows } = await sql().query<
      QueueRow & {
        grp: string
        runMine: number | null
        runDone: number | null
        blocker: Blocker | null
        fillFirst: number | null
        instanceDone: number | null
      }
    >(
      `SELECT q.*,
              (SELECT count(*)::int FROM "SessionSeat" p2 JOIN "ProtocolSession" s2 ON s2.id = p2."sessionId"
                WHERE ${holdsSql('$1', 'p2', 's2')} AND s2."runId" = q."runId") AS "runMine",
              (SELECT count(*)::int FROM "SessionSeat" p2 JOIN "ProtocolSession" s2 ON s2.id = p2."sessionId"
                WHERE ${holdsSql('$1', 'p2', 's2')} AND s2."runId" = q."runId" AND s2.status = 'done') AS "runDone",
              -- What a waiting session waits for: the first unfinished session before it in its chain.
              CASE WHEN q.grp = 'waiting' THEN (
                SELECT json_build_object('id', b.id, 'status', b.status, 'position', b.position, 'task', b.task,
                         'instance', b.instance, 'protocol', b.protocol,
                         'mine', EXISTS (SELECT 1 FROM "SessionSeat" pb WHERE pb."sessionId" = b.id AND ${holdsSql('$1', 'pb', 'b')}),
                         'yours', b.status = 'awaiting' AND EXISTS (SELECT 1 FROM "SessionSeat" pb
                                    WHERE pb."sessionId" = b.id AND ${holdsSql('$1', 'pb', 'b')} AND pb.seat = b."awaitingSeat"))
                FROM "ProtocolSession" b
                WHERE b."runId" = q."runId" AND b.repetition = q.repetition AND b.position < q.position
                  AND b.status NOT IN ('done', 'cancelled')
                ORDER BY b.position LIMIT 1) END AS blocker
       FROM (${base}) q
       WHERE $3::text IS NULL OR grp = $3
       ORDER BY CASE grp WHEN 'yours' THEN 0 WHEN 'claimable' THEN 1 WHEN 'others' THEN 2 WHEN 'waiting' THEN 3
                         WHEN 'stalled' THEN 4 ELSE 5 END,
                -- A run's sessions awaiting the person go together, by position, where its oldest waits.
                min(CASE WHEN grp = 'yours' THEN "updatedAt" END) OVER (PARTITION BY grp, COALESCE("runId", id)) ASC NULLS LAST,
                "runId",
                ${FILL_FIRST_ORDER},
                repetition, position, id
       LIMIT $4 OFFSET $5`,
      [actor.userId, claimAs, filter ?? null, pageSize, (page - 1) * pageSize],
    )
    const by = Object.fromEntries(counts.rows.map((r) => [r.grp, r.n]))
    const total = filter ? (by[filter] ?? 0) : counts.rows.reduce((a, r) => a + r.n, 0)
    const plugins = new Map((await allPlugins()).map((p) => [p.protocol.id, p]))
    const items = rows.map(({ instance, blocker, fillFirst: _f, instanceDone: _d, ...r }) => {
      const plugin = plugins.get(r.protocol)
      const seat = plugin?.protocol.seats.find((d) => d.name === r.seat)
      const titleOf = (protocol: string, inst: unknown, task: string, position: number) =>
        sessionTitle(plugins.get(protocol), inst, task) ?? `#${position + 1}`
      return {
        ...r,
        protocolLabel: plugin?.protocol.label ?? r.protocol,
        seatLabel: seat?.label ?? r.seat,
        title: titleOf(r.protocol, instance, r.task, r.position),
        /** For a session waiting for an earlier one of its chain: that session, named. */
        waitingFor: blocker
          ? {
              id: blocker.id,
              status: blocker.status,
              position: blocker.position,
              title: titleOf(blocker.protocol, blocker.instance, blocker.task, blocker.position),
              mine: blocker.mine,
              yours: blocker.yours,
            }
          : null,
      }
    })
    return {
      counts: {
        yours: by.yours ?? 0,
        claimable: by.claimable ?? 0,
        others: by.others ?? 0,
        waiting: by.waiting ?? 0,
        stalled: by.stalled ?? 0,
        done: by.done ?? 0,
      },
      /** The next session waiting for this person (oldest first). */
      next: filter && filter !== 'yours' ? null : (items.find((i) => i.grp === 'yours')?.id ?? null),
      ...pageOf(items, total, page, pageSize),
    }
  },
})

/**
 * The seats person $1 (taking part under the study roles $2) may claim in the run `run` (an SQL
 * expression), as the work queue offers them (`queueBaseSql`: a member who takes part, the seat free,
 * the session open, a distinct-claimants run's rule), leaving out sessions where they already hold a
 * seat and the session `except` (an SQL expression, or NULL). Queue rows; order them by `CLAIM_ORDER`.
 * Shared by "Next session" (`nextSessionFor`) and `sessions.claim-next`.
 */
function claimableInRunSql(run: string, except = 'NULL'): string {
  return `SELECT q.* FROM (${queueBaseSql()}) q
     WHERE q.grp = 'claimable' AND q.claimable AND q."runId" = ${run} AND q.id <> COALESCE(${except}, '')
       AND NOT EXISTS (SELECT 1 FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
                       WHERE p."sessionId" = q.id AND ${holdsSql('$1')})`
}

/** The order in which a run's claimable seats are offered: the run's `fillFirst` hint, then as the queue lists them. */
const CLAIM_ORDER = `${FILL_FIRST_ORDER}, repetition, position, id, seat`

/**
 * The next session for this person (for "Next session"), going on where they are: after a session of a
 * run (`after`), first one of that run awaiting them, then a seat they may claim in it (the next item of
 * a labelling run: "the next item opens as soon as one is submitted"), in the queue's order (the run's
 * `fillFirst` hint first), never one a run with distinct claimants would refuse them (another session of
 * an item they hold or worked on); then, or without `after`, the session awaiting them whose run has
 * waited longest, and in it the first by position (as the work queue lists them). `claim` says the
 * session is offered, not held.
 */
export async function nextSessionFor(
  actor: { userId: string; role: Role },
  after?: string,
): Promise<{ id: string; claim: boolean } | null> {
  const awaiting = async (sameRun: boolean) =>
    (
      await sql().query<{ id: string }>(
        `SELECT s.id FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
         WHERE ${holdsSql('$1')} AND s.status = 'awaiting' AND s."awaitingSeat" = p.seat AND s.id <> COALESCE($2, '')
           AND (NOT $3 OR s."runId" = (SELECT a."runId" FROM "ProtocolSession" a WHERE a.id = $2))
         ORDER BY min(s."updatedAt") OVER (PARTITION BY COALESCE(s."runId", s.id)), s.repetition, s.position, s.id
         LIMIT 1`,
        [actor.userId, after ?? null, sameRun],
      )
    ).rows[0]
  if (after) {
    const inRun = await awaiting(true)
    if (inRun) return { id: inRun.id, claim: false }
    if (hasScope(actor.role, 'work:submit')) {
      const offered = await sql().query<{ id: string }>(
        `SELECT c.id FROM (${claimableInRunSql('(SELECT a."runId" FROM "ProtocolSession" a WHERE a.id = $3)', '$3')}) c
         ORDER BY ${CLAIM_ORDER}
         LIMIT 1`,
        [actor.userId, takePartStudyRoles(actor.role), after],
      )
      if (offered.rows[0]) return { id: offered.rows[0].id, claim: true }
    }
  }
  const elsewhere = await awaiting(false)
  return elsewhere ? { id: elsewhere.id, claim: false } : null
}

// ---------------------------------------------------------------------------------------------
// One session
// ---------------------------------------------------------------------------------------------

type PageRow = StepSession & {
  updatedAt: Date
  stallError: string | null
  stopReason: string | null
  retryCount: number
  study: { id: string; name: string; guidelines: string | null }
  run: { id: string; name: string; status: string } | null
  memberRole: string | null
  people: Array<{
    seat: string
    userId: string | null
    claimable: boolean
    name: string | null
    email: string | null
    leaseUntil: string | null
    /** A claim whose lease lapsed: the seat is free (the person still sees the session, to claim again). */
    lapsed: boolean
  }>
  rows: Array<{ seq: number; body: unknown; authorUserId: string | null; createdAt: string; payload: unknown }>
  /** The viewer's kept drafts of turns not yet sent (one per message number). */
  drafts: Array<{ seq: number; data: unknown; updatedAt: string }>
}

/**
 * Everything the session page needs in one statement (it was eight round trips: the session with
 * its seats, people, study and run through Prisma, the log twice, the study role): the session as a
 * step loads it, the people in its seats, its study and run, the viewer's study role, every message.
 */
async function loadSessionForViewer(sessionId: string, userId: string): Promise<PageRow | null> {
  const { rows } = await sql().query<PageRow>(
    `SELECT s.id, s."studyId", s."runId", s.protocol, s.task, s.repetition, s.position, s.status,
            s."awaitingSeat", s.config, s.seats, s.instance, s."updatedAt", s."stallError", s."stopReason",
            s."retryCount", e.status AS "runStatus", s.key, s."parentId", s."forkSeq",
            json_build_object('id', st.id, 'name', st.name, 'guidelines', st.guidelines) AS study,
            CASE WHEN e.id IS NULL THEN NULL
                 ELSE json_build_object('id', e.id, 'name', e.name, 'status', e.status) END AS run,
            (SELECT sm.role FROM "StudyMember" sm WHERE sm."studyId" = s."studyId" AND sm."userId" = $2) AS "memberRole",
            COALESCE((SELECT json_agg(json_build_object('seat', p.seat, 'userId', p."userId", 'claimable', p.claimable,
                                                        'name', u.name, 'email', u.email, 'leaseUntil', p."leaseUntil",
                                                        'lapsed', ${lapsedSql()}) ORDER BY p.seat)
                      FROM "SessionSeat" p LEFT JOIN "user" u ON u.id = p."userId"
                      WHERE p."sessionId" = s.id), '[]') AS people,
            COALESCE((SELECT json_agg(json_build_object('seq', m.seq, 'body', m.body, 'authorUserId', m."authorUserId",
                                                        'createdAt', m."createdAt", 'payload', m.payload) ORDER BY m.seq)
                      FROM "ProtocolMessage" m WHERE m."sessionId" = s.id), '[]') AS rows,
            COALESCE((SELECT json_agg(json_build_object('seq', d.seq, 'data', d.data, 'updatedAt', d."updatedAt"))
                      FROM "TurnDraft" d WHERE d."sessionId" = s.id AND d."userId" = $2), '[]') AS drafts
     FROM "ProtocolSession" s
     JOIN "Study" st ON st.id = s."studyId"
     LEFT JOIN "Run" e ON e.id = s."runId"
     WHERE s.id = $1`,
    [sessionId, userId],
  )
  return rows[0] ?? null
}

/**
 * A stored log the protocol's rules refuse (a message written before a rule existed): a clear 409
 * naming the message, not a 500 that says to try again. The log is kept as it is; the inspector,
 * which does not replay it, shows every message.
 */
function storedLogRefused(err: unknown): never {
  if (!(err instanceof ProtocolError)) throw err
  const why = /[.!?]$/.test(err.message) ? err.message : `${err.message}.`
  throw conflict(
    `This session's log breaks the protocol's rules as they are now: ${why} It is kept as stored; the inspector shows every message.`,
  )
}

export const getSession = defineOperation({
  name: 'sessions.get',
  scope: 'work:read-own',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const row = await loadSessionForViewer(sessionId, actor.userId)
    // Those in its seats see a session; with work:read-study also the readers of its study (the
    // same rule as visibleSessions, decided here from the one statement).
    const seated = !!row?.people.some((p) => p.userId === actor.userId)
    // Researchers of the study (read access), not a researcher account seated as an expert in it.
    const researcher =
      !!row &&
      hasScope(actor.role, 'work:read-study') &&
      (hasScope(actor.role, 'studies:read-all') || studyPermissions(actor.role, row.memberRole).includes('read'))
    if (!row || !(seated || researcher)) throw notFound('Session')
    const {
      updatedAt,
      stallError,
      stopReason,
      retryCount,
      study,
      run,
      memberRole: _r,
      people,
      rows,
      drafts,
      ...step
    } = row
    // Who holds each seat now: a lapsed claim holds nothing (decided when read; no reaper).
    const held = people.map((p) => (p.lapsed ? { ...p, userId: null } : p))
    const meta = {
      people: held.map((p) => ({ ...p, user: p.userId ? { name: p.name ?? '', email: p.email ?? '' } : null })),
      study,
      run,
      updatedAt,
      stallError,
      stopReason,
      retryCount,
    }
    const loaded = await prepare({ ...step, messages: rows.map((m) => m.body) as StepSession['messages'] }).catch(
      storedLogRefused,
    )
    const { plugin, ctx, session } = loaded
    const next = plugin.protocol.next(ctx.state) as Ask<string, string, string> | { done: true; reason: string }
    const mySeats = meta.people.filter((p) => p.userId === actor.userId).map((p) => p.seat)
    const ask = next.done ? null : next
    const viewCtx = { ...ctx, mySeats, ask, viewer: actor }
    const views = await plugin.views()
    const view = await views.session(viewCtx)
    const yourTurn = !!ask && mySeats.includes(ask.seat) && session.status !== 'cancelled'
    const draft = yourTurn ? (drafts.find((d) => d.seq === ask.j) ?? null) : null
    const working = session.status === 'queued' && ((await workingSessions({ sessionId })).size ?? 0) > 0
    return {
      id: session.id,
      protocol: session.protocol,
      protocolLabel: plugin.protocol.label,
      /** "running" while a worker steps it (calling a model), else the stored status. */
      status: working ? 'running' : session.status,
      awaitingSeat: session.awaitingSeat,
      stopReason: meta.stopReason,
      stallError: researcher || mySeats.length ? meta.stallError : null,
      retryCount: meta.retryCount,
      task: session.task,
      title: plugin.title?.(ctx.instance, session.task) ?? null,
      study: meta.study,
      run: meta.run,
      updatedAt: meta.updatedAt,
      seats: plugin.protocol.seats.map((d) => {
        const fill = ctx.seats[d.name]
        const person = meta.people.find((p) => p.seat === d.name)
        return {
          name: d.name,
          label: d.label,
          kind: fill?.kind ?? null,
          kindLabel: fill ? kindLabel(fill.kind) : null,
          person: person?.user ? person.user.name || person.user.email : null,
          claimable: !!person?.claimable && !person.userId,
          model: fill?.kind === 'llm' ? (fill.model.name ?? fill.model.model ?? null) : null,
          program: fill?.kind === 'program' ? fill.program : null,
        }
      }),
      messages: rows.map((m) => ({
        seq: m.seq,
        body:
          !researcher && views.participantMessage
            ? views.participantMessage(m.body as unknown as BaseMessage, viewCtx)
            : m.body,
        byPerson: !!m.authorUserId,
        createdAt: new Date(m.createdAt),
        // What agents noted beside their messages (raw replies) is for researchers only.
        ...(researcher ? { meta: m.payload } : {}),
      })),
      ask: ask ? { seat: ask.seat, j: ask.j, kind: ask.kind ?? null, allowedTags: [...(ask.allowedTags ?? [])] } : null,
      done: next.done ? next.reason : null,
      mySeats,
      yourTurn,
      /** The person's unsent turn for this message, kept on the server (any browser). */
      draft: draft ? { data: draft.data as Record<string, unknown>, updatedAt: new Date(draft.updatedAt) } : null,
      /** Open seats this person may claim (none for a viewer of the study: they do not take part). */
      claimableSeats: mayTakePart(actor.role, row.memberRole)
        ? meta.people.filter((p) => !p.userId && p.claimable).map((p) => p.seat)
        : [],
      /**
       * The viewer's claim of a claimable seat while it holds: when it lapses, and how long each renewal
       * (`sessions.heartbeat`) lasts; the turn page renews it while open. Null for a seat named for them.
       */
      lease: (() => {
        const claim = held.find((p) => p.userId === actor.userId && p.leaseUntil)
        return claim?.leaseUntil
          ? { seat: claim.seat, until: new Date(claim.leaseUntil), seconds: leaseSeconds() }
          : null
      })(),
      view,
    }
  },
})

/** A turn from someone whose claim lapsed and was taken, or who gave the seat back. */
const NOT_HELD =
  'You no longer hold a seat of this session (your claim lapsed and someone else took it, or you gave it back), so nothing was saved.'

/** Why a member who reads a study may not fill its seats (`mayTakePart`). */
const NOT_TAKING_PART =
  'Your role in this study does not take part in its sessions (viewers read them). A study admin can change your role.'

export const SubmitTurnInput = z.looseObject({
  sessionId: id,
  /** The message number the person answered (guards against answering twice or out of turn). */
  seq: z.coerce.number().int().min(1),
})

/**
 * A person's turn, for every protocol: the plugin validates the input and turns it into the
 * protocol's message, `apply` checks it against the rules, then M + C + the status and the audit
 * row are written in one transaction; the next step goes on the queue.
 */
export const submitTurn = defineOperation({
  name: 'sessions.submit',
  scope: 'work:submit',
  input: SubmitTurnInput,
  async run(actor, raw) {
    const { sessionId, seq, ...rest } = raw
    const { rows: found } = await sql().query<{
      memberRole: string | null
      hasClaimable: boolean
      open: boolean
      mine: Array<{ seat: string; lapsed: boolean }>
    }>(
      `SELECT (SELECT sm.role FROM "StudyMember" sm WHERE sm."studyId" = s."studyId" AND sm."userId" = $2) AS "memberRole",
              EXISTS (SELECT 1 FROM "SessionSeat" p WHERE p."sessionId" = s.id AND p.claimable) AS "hasClaimable",
              s.status NOT IN ('done', 'cancelled') AS open,
              COALESCE((SELECT json_agg(json_build_object('seat', p.seat, 'lapsed', ${lapsedSql()}))
                        FROM "SessionSeat" p WHERE p."sessionId" = s.id AND p."userId" = $2), '[]') AS mine
       FROM "ProtocolSession" s WHERE s.id = $1`,
      [sessionId, actor.userId],
    )
    const f = found[0]
    const mine = f?.mine ?? []
    const memberRole = f?.memberRole ?? null
    if (!f || !mine.length) {
      // Not seated. A member offered the session's claimable seats (as `sessions.claim` decides) learns
      // why, to act on it; anyone else gets the 404 of a session they cannot see.
      if (f?.open && f.hasClaimable && mayTakePart(actor.role, memberRole)) throw conflict(NOT_HELD)
      throw notFound('Session')
    }
    // Seated, so they see the session; a member whose study role does not take part (a viewer,
    // e.g. made one since they took the seat) sends nothing.
    if (memberRole && mine.length && !mayTakePart(actor.role, memberRole)) throw forbidden(NOT_TAKING_PART)
    const live = mine.filter((m) => !m.lapsed)
    if (!live.length)
      throw conflict(
        `Your claim of the ${mine[0]?.seat} seat lapsed (it was not renewed for ${leaseSeconds()} s), so nothing was saved. Claim it again if it is still free.`,
      )
    const loaded = await prepare(await loadSession(sessionId))
    const { plugin, ctx, session } = loaded
    if (session.status === 'cancelled') throw conflict('This session was cancelled; nothing more can be added.')
    const next = plugin.protocol.next(ctx.state) as Ask<string, string, string> | { done: true; reason: string }
    if (next.done) throw conflict('This session is over; nothing more can be added.')
    const seats = live.map((m) => m.seat)
    if (next.j !== seq || !seats.includes(next.seat))
      throw conflict(seq < next.j ? 'This message was already answered (in another tab?).' : 'It is not your turn yet.')
    const input = plugin.human.input.parse(rest)
    const produced = await plugin.human.toMessage({ ...ctx, ask: next, seat: next.seat, actor }, input)
    let after: unknown
    try {
      after = plugin.protocol.apply(ctx.state, produced.message)
    } catch (err) {
      if (err instanceof ProtocolError) throw badRequest(err.message)
      throw err
    }
    const end = plugin.protocol.next(after) as Ask<string, string, string> | { done: true; reason: string }
    const doneReason = end.done ? (end.reason ?? 'done') : null
    const awaitingSeat = humanSeatAsked(end, ctx.seats)
    try {
      // One transaction on `pg`: the seat's hold and this person's drafts up to the message, the message
      // (M + C + status), the audit row.
      await pgTransaction(async (client) => {
        const exec: Exec = async (text, params) => (await client.query(text, params)).rows
        // The seat is still this person's (not lapsed, not taken meanwhile), locked until the turn is
        // written: a claim racing this turn waits and then finds the lease renewed. Its lease renews.
        // Their drafts up to this message go in the same statement (one round trip per turn; when the
        // seat is not held the transaction rolls back and the drafts stay).
        const hold = await client.query<{ held: number }>(
          `WITH hold AS (
             UPDATE "SessionSeat" p
             SET "leaseUntil" = CASE WHEN p."leaseUntil" IS NULL THEN NULL ELSE now() + make_interval(secs => $4) END
             FROM "ProtocolSession" s
             WHERE s.id = p."sessionId" AND p."sessionId" = $1 AND p.seat = $2 AND ${holdsSql('$3')}
             RETURNING 1),
           drafts AS (DELETE FROM "TurnDraft" WHERE "sessionId" = $1 AND "userId" = $3 AND seq <= $5)
           SELECT count(*)::int AS held FROM hold`,
          [sessionId, next.seat, actor.userId, leaseSeconds(), next.j],
        )
        if (hold.rows[0]?.held !== 1) throw conflict(NOT_HELD)
        await appendMessage(
          loaded,
          { ...produced, context: produced.context ?? { person: actor.email } },
          doneReason,
          awaitingSeat,
          { userId: actor.userId },
          exec,
        )
        await writeAuditSql(client, {
          actor: actorRef(actor),
          action: 'session.turn',
          resourceType: 'session',
          resourceId: session.id,
          studyId: session.studyId,
          after: {
            seq: next.j,
            seat: next.seat,
            protocol: session.protocol,
            ...(produced.meta?.audit as object | undefined),
          },
        })
      })
    } catch (err) {
      if (isUniqueViolation(err) || isUniqueViolation((err as { cause?: unknown }).cause))
        throw conflict('This message was already answered (in another tab?).')
      if (err instanceof AppError) throw err
      throw err
    }
    notifyAppended(session, next.j, doneReason)
    if (doneReason) {
      await afterSessionDone(session.id)
      await sessionEnded(session, 'done')
    } else if (!awaitingSeat && (!session.runId || session.runStatus === 'running'))
      await enqueueSteps([session.id], session.runId, undefined, { interactive: true })
    return { sessionId: session.id, seq: next.j, done: doneReason, message: produced.message }
  },
})

/**
 * Keep a person's unsent turn on the server, per (session, message number, person), so it survives a
 * reload and a new browser; `sessions.get` hands it back with the turn, `sessions.submit` deletes it.
 * Only someone who fills a seat of the session (404 otherwise), only for a message not yet written
 * (409). The form saves as the person types, so no audit row is written: a draft is not study data
 * until it is sent, and the sent turn is audited.
 */
export const saveDraft = defineOperation({
  name: 'sessions.save-draft',
  scope: 'work:submit',
  input: z.object({
    sessionId: id,
    seq: z.coerce.number().int().min(1).max(100_000),
    data: z.record(z.string().max(60), z.unknown()).refine((d) => Object.keys(d).length <= 50, 'Too many fields.'),
  }),
  async run(actor, { sessionId, seq, data }) {
    const { rows } = await sql().query<{ seated: boolean; last: number | null }>(
      `SELECT EXISTS (SELECT 1 FROM "SessionSeat" WHERE "sessionId" = $1 AND "userId" = $2) AS seated,
              (SELECT max(seq) FROM "ProtocolMessage" WHERE "sessionId" = $1) AS last`,
      [sessionId, actor.userId],
    )
    if (!rows[0]?.seated) throw notFound('Session')
    if (seq <= (rows[0].last ?? 0)) throw conflict('This message was already sent; the draft is not kept.')
    const saved = await db.turnDraft.upsert({
      where: { sessionId_seq_userId: { sessionId, seq, userId: actor.userId } },
      create: { sessionId, seq, userId: actor.userId, data: data as Prisma.InputJsonValue },
      update: { data: data as Prisma.InputJsonValue },
      select: { updatedAt: true },
    })
    return { sessionId, seq, updatedAt: saved.updatedAt }
  },
})

/**
 * Someone who holds no seat of the session. A member offered its claimable seats (as `sessions.claim`
 * decides: one who takes part, the session open) learns why, a 409 to act on (their claim lapsed and
 * was taken, or they gave it back); anyone else gets the 404 of a session they cannot see.
 */
async function notSeated(actor: Actor, sessionId: string): Promise<never> {
  const { rows } = await sql().query<{ memberRole: string | null; offered: boolean }>(
    `SELECT (SELECT sm.role FROM "StudyMember" sm WHERE sm."studyId" = s."studyId" AND sm."userId" = $2) AS "memberRole",
            s.status NOT IN ('done', 'cancelled')
              AND EXISTS (SELECT 1 FROM "SessionSeat" p WHERE p."sessionId" = s.id AND p.claimable) AS offered
     FROM "ProtocolSession" s WHERE s.id = $1`,
    [sessionId, actor.userId],
  )
  const r = rows[0]
  if (r?.offered && mayTakePart(actor.role, r.memberRole)) throw conflict(NOT_HELD)
  throw notFound('Session')
}

/**
 * Put a person in a free claimable seat of an open session: the one way a seat is taken after the
 * session was made (a claim, `sessions.claim`, and a researcher naming a person, `sessions.assign`).
 * With `leaseSeconds` the seat is held as a lease (a claim); without, it is held for good (named).
 * Decided under a per-person lock (per run with distinct claimants, else per session), so two takings
 * for one person never both pass a check, and the seat's row lock gives one winner between people.
 * Refuses (writing nothing) when the person already holds a seat of the session, holds or worked on
 * another session of the same instance of a distinct-claimants run (`runId`), or the seat is not free.
 */
async function seatPerson(
  client: pg.ClientBase,
  p: { sessionId: string; seat: string; userId: string; runId: string | null; leaseSeconds: number | null },
): Promise<
  { refused: null; leaseUntil: Date | null } | { refused: 'holds'; seat: string } | { refused: 'distinct' | 'taken' }
> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `seat-claim:${p.runId ?? p.sessionId}:${p.userId}`,
  ])
  const again = await client.query<{ seat: string }>(
    `SELECT p.seat FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
     WHERE p."sessionId" = $1 AND ${holdsSql('$2')} LIMIT 1`,
    [p.sessionId, p.userId],
  )
  if (again.rows[0]) return { refused: 'holds', seat: again.rows[0].seat }
  if (p.runId) {
    // Another session of the same instance of this run that the person holds or has worked on.
    const other = await client.query(
      `SELECT 1 FROM "ProtocolSession" me WHERE me.id = $1 AND ${sameInstanceTakenSql('me', '$2')}`,
      [p.sessionId, p.userId],
    )
    if (other.rowCount) return { refused: 'distinct' }
  }
  const r = await client.query<{ leaseUntil: Date | null }>(
    `UPDATE "SessionSeat" p SET "userId" = $3, "claimedAt" = now(),
       "leaseUntil" = CASE WHEN $4::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $4::float8) END
     FROM "ProtocolSession" s
     WHERE s.id = p."sessionId" AND p."sessionId" = $1 AND p.seat = $2 AND p.claimable AND ${freeSql()}
       AND s.status NOT IN ('done', 'cancelled')
     RETURNING p."leaseUntil"`,
    [p.sessionId, p.seat, p.userId, p.leaseSeconds],
  )
  if (!r.rowCount) return { refused: 'taken' }
  return { refused: null, leaseUntil: r.rows[0]?.leaseUntil ?? null }
}

/**
 * Take a claimable seat (first come): a lease of PARLEY_SEAT_LEASE_SECONDS, renewed while the person
 * works (`sessions.heartbeat`, each turn), free again once it lapses or is given back
 * (`sessions.release`). Claiming needs the account's `work:submit` and a membership whose study role
 * takes part (`mayTakePart`: not a viewer). A session the person cannot see is 404, as `sessions.get`
 * answers: they see it when they sit in it, read its study as a researcher does, or are offered it (a
 * member who takes part, the session open and with a claimable seat, as the work queue lists it). Only
 * then do the 403 and 409s below tell anything about it. A run with `distinctClaimants` gives one
 * person at most one session of each instance (held, or worked on). The claim is decided under a
 * per-person lock (per run, or per session), so two claims of one person never both pass a check, and
 * the seat's row lock makes two people's claims of one seat give one winner.
 */
export const claimSeat = defineOperation({
  name: 'sessions.claim',
  scope: 'work:submit',
  input: z.object({ sessionId: id, seat: z.string().trim().min(1).max(60) }),
  async run(actor, { sessionId, seat }) {
    const { rows } = await sql().query<{
      studyId: string
      runId: string | null
      status: string
      distinct: boolean
      memberRole: string | null
      heldSeat: string | null
      hasClaimable: boolean
    }>(
      `SELECT s."studyId", s."runId", s.status, COALESCE(e."distinctClaimants", false) AS "distinct",
              (SELECT sm.role FROM "StudyMember" sm WHERE sm."studyId" = s."studyId" AND sm."userId" = $2) AS "memberRole",
              (SELECT p.seat FROM "SessionSeat" p WHERE p."sessionId" = s.id AND ${holdsSql('$2')} LIMIT 1) AS "heldSeat",
              EXISTS (SELECT 1 FROM "SessionSeat" p WHERE p."sessionId" = s.id AND p.claimable) AS "hasClaimable"
       FROM "ProtocolSession" s LEFT JOIN "Run" e ON e.id = s."runId" WHERE s.id = $1`,
      [sessionId, actor.userId],
    )
    const s = rows[0]
    if (!s) throw notFound('Session')
    const takesPart = mayTakePart(actor.role, s.memberRole)
    const open = s.status !== 'done' && s.status !== 'cancelled'
    const offered = takesPart && open && s.hasClaimable
    const reader =
      hasScope(actor.role, 'work:read-study') &&
      (hasScope(actor.role, 'studies:read-all') || studyPermissions(actor.role, s.memberRole).includes('read'))
    if (!(s.heldSeat || reader || offered)) throw notFound('Session')
    if (s.heldSeat) throw conflict(`You already fill the ${s.heldSeat} seat of this session.`)
    if (!takesPart)
      throw forbidden(s.memberRole ? NOT_TAKING_PART : 'Only members of the study take part in its sessions.')
    if (!open) throw conflict('This session is over; its seats can no longer be claimed.')
    const claimed = await pgTransaction(async (client) => {
      const taken = await leaseSeat(client, actor, { sessionId, seat, studyId: s.studyId, runId: s.runId }, s.distinct)
      if (taken.refused === 'holds') throw conflict(`You already fill the ${taken.seat} seat of this session.`)
      if (taken.refused === 'distinct')
        throw conflict(
          'You already have a session of this item in this run; each of its sessions goes to a different person.',
        )
      if (taken.refused) return null
      return taken.leaseUntil
    })
    if (!claimed) throw conflict('Someone else took this seat, or it cannot be claimed.')
    await publishSession(sessionId, s.runId, { type: 'status', status: s.status })
    return { sessionId, seat, leaseUntil: claimed }
  },
})

/**
 * A claim (`sessions.claim`, `sessions.claim-next`) inside the caller's transaction: the seat as a
 * lease of PARLEY_SEAT_LEASE_SECONDS (`seatPerson`, under its per-person lock), audited when taken.
 */
async function leaseSeat(
  client: pg.ClientBase,
  actor: Actor,
  at: { sessionId: string; seat: string; studyId: string; runId: string | null },
  distinct: boolean,
) {
  const taken = await seatPerson(client, {
    sessionId: at.sessionId,
    seat: at.seat,
    userId: actor.userId,
    runId: distinct ? at.runId : null,
    leaseSeconds: leaseSeconds(),
  })
  if (taken.refused) return taken
  await writeAuditSql(client, {
    actor: actorRef(actor),
    action: 'session.claim',
    resourceType: 'session',
    resourceId: at.sessionId,
    studyId: at.studyId,
    after: { seat: at.seat, leaseUntil: taken.leaseUntil },
  })
  return taken
}

/**
 * The picks of `sessions.claim-next` ($1 the person, $2 the run, $3 the run's `fillFirst` where the
 * tier uses it), tried in this order until one gives a seat: the first seat the person may claim in
 * the run in the queue's order, locked, skipping seats another transaction holds locked. The queue's
 * order is the `fillFirst` hint (items with 1 … fillFirst−1 finished sessions, most first; then items
 * with none; then the rest), then repetition, position, session and seat. Each tier is its own query
 * so that every one can stop at its first free seat: `progress` over the items in progress only (their
 * finished sessions counted by ("runId", status)), `fresh` and `rest` walking the run's open sessions
 * in order on the partial index "ProtocolSession_open_order_idx" (only sessions not done or cancelled).
 * One query sorting every open seat under the hint cost ~100 ms at 9,000 slots and saturated the
 * server at 100 annotators (bench:labelling). Exported for the test of their plans.
 */
export function claimNextPicks(opts: {
  fillFirst: number | null
  distinct: boolean
}): Array<{ text: string; values: (userId: string, runId: string) => unknown[] }> {
  // The caller has checked that the person takes part in the run's study and that it is not archived.
  const held = `held AS (
       SELECT o.id, o."instanceId" FROM "SessionSeat" p JOIN "ProtocolSession" o ON o.id = p."sessionId"
        WHERE o."runId" = $2 AND ${holdsSql('$1', 'p', 'o')})`
  // A run with distinct claimants never offers a second slot of an item the person holds or worked on.
  const worked = `worked AS (
       SELECT o.id, o."instanceId" FROM "ProtocolMessage" m JOIN "ProtocolSession" o ON o.id = m."sessionId"
        WHERE m."authorUserId" = $1 AND o."runId" = $2)`
  const distinct = `AND NOT (s."instanceId" IS NOT NULL
                 AND (EXISTS (SELECT 1 FROM held h WHERE h."instanceId" = s."instanceId" AND h.id <> s.id)
                      OR EXISTS (SELECT 1 FROM worked w WHERE w."instanceId" = s."instanceId" AND w.id <> s.id)))`
  const ctes = opts.distinct ? [held, worked] : [held]
  const eligible = `s."runId" = $2 AND s.status NOT IN ('done', 'cancelled') AND p.claimable AND ${freeSql()}
        AND NOT EXISTS (SELECT 1 FROM held h WHERE h.id = s.id) ${opts.distinct ? distinct : ''}`
  const pick = (from: string, where: string, order: string, extraCtes: string[] = []) =>
    `WITH ${[...ctes, ...extraCtes].join(',\n     ')}
     SELECT p."sessionId", p.seat, s.status FROM ${from}
       JOIN "SessionSeat" p ON p."sessionId" = s.id
      WHERE ${eligible} ${where}
      ORDER BY ${order}s.repetition, s.position, s.id, p.seat
      LIMIT 1
      FOR UPDATE OF p SKIP LOCKED`
  const two = (userId: string, runId: string) => [userId, runId]
  const rest = { text: pick('"ProtocolSession" s', '', ''), values: two }
  const { fillFirst } = opts
  if (fillFirst === null) return [rest]
  // OFFSET 0 keeps a subquery as written (PostgreSQL does not pull it up): here, each item in progress
  // looks up its own sessions; in `fresh`, a per-row test the planner cannot misjudge as an anti-join of
  // one row (which made it scan every seat per session).
  const progress = {
    values: (userId: string, runId: string) => [userId, runId, fillFirst],
    text: pick(
      `progress d CROSS JOIN LATERAL (
          SELECT o.id, o."runId", o."instanceId", o.status, o.repetition, o.position
            FROM "ProtocolSession" o WHERE o."runId" = $2 AND o."instanceId" = d."instanceId" OFFSET 0) s`,
      '',
      'd.n DESC, ',
      [
        `progress AS (
       SELECT "instanceId", count(*)::int AS n FROM "ProtocolSession"
        WHERE "runId" = $2 AND status = 'done' AND "instanceId" IS NOT NULL
        GROUP BY "instanceId" HAVING count(*) < $3)`,
      ],
    ),
  }
  const fresh = {
    values: two,
    text: pick(
      '"ProtocolSession" s',
      `AND s."instanceId" IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM "ProtocolSession" x WHERE x."runId" = $2 AND x."instanceId" = s."instanceId" AND x.status = 'done'
          OFFSET 0)`,
      '',
    ),
  }
  return [progress, fresh, rest]
}

/** How often `sessions.claim-next` picks again when the seat it locked was refused (a race it lost). */
const CLAIM_NEXT_ATTEMPTS = 5

/**
 * Claim the next seat of a run for the caller, in one call ("the next item opens as soon as one is
 * submitted"): of the seats they may claim there (as the work queue and `sessions.claim` decide: a
 * member who takes part, the seat free, the session open, a distinct-claimants run's rule), the first
 * in the queue's order (the run's `fillFirst` hint first) is locked with FOR UPDATE SKIP LOCKED, so
 * concurrent callers each get a different seat instead of racing for one, and claimed as
 * `sessions.claim` claims (a lease, renewed by `sessions.heartbeat`). In a distinct-claimants run the
 * person's per-run lock is taken before the pick, so two calls of one person never take two sessions of
 * one item. The run answers as `sessions.claim` answers for a session: 404 unless the person takes part
 * in its study or reads it, 403 for a member who does not take part; 404 "nothing left" when no seat is
 * left for them (all taken, finished, or refused them by the distinct-claimants rule); 409 in the rare
 * case that every seat it picked was refused when taken (ask again).
 */
export const claimNext = defineOperation({
  name: 'sessions.claim-next',
  scope: 'work:submit',
  input: z.object({ runId: id }),
  async run(actor, { runId }) {
    const { rows } = await sql().query<{
      studyId: string
      distinct: boolean
      fillFirst: number | null
      memberRole: string | null
    }>(
      `SELECT e."studyId", e."distinctClaimants" AS "distinct", e."fillFirst",
              (SELECT sm.role FROM "StudyMember" sm WHERE sm."studyId" = e."studyId" AND sm."userId" = $2) AS "memberRole"
       FROM "Run" e JOIN "Study" st ON st.id = e."studyId" AND st."archivedAt" IS NULL WHERE e.id = $1`,
      [runId, actor.userId],
    )
    const r = rows[0]
    if (!r) throw notFound('Run')
    const takesPart = mayTakePart(actor.role, r.memberRole)
    const reader =
      hasScope(actor.role, 'work:read-study') &&
      (hasScope(actor.role, 'studies:read-all') || studyPermissions(actor.role, r.memberRole).includes('read'))
    if (!(takesPart || reader)) throw notFound('Run')
    if (!takesPart)
      throw forbidden(r.memberRole ? NOT_TAKING_PART : 'Only members of the study take part in its sessions.')
    const picks = claimNextPicks({ fillFirst: r.fillFirst, distinct: r.distinct })
    for (let attempt = 0; attempt < CLAIM_NEXT_ATTEMPTS; attempt++) {
      const got = await pgTransaction(async (client) => {
        // The person's per-run lock first (as `seatPerson` takes it; it is re-entrant), so the pick
        // below already sees their other claims of this run.
        if (r.distinct)
          await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
            `seat-claim:${runId}:${actor.userId}`,
          ])
        // Seats another caller holds locked are skipped; the free test on the locked row is checked
        // again on its newest version, so a seat taken since this statement's snapshot is passed over.
        let seat: { sessionId: string; seat: string; status: string } | undefined
        for (const pick of picks) {
          const found = await client.query<{ sessionId: string; seat: string; status: string }>(
            pick.text,
            pick.values(actor.userId, runId),
          )
          seat = found.rows[0]
          if (seat) break
        }
        if (!seat) return { none: true as const }
        const taken = await leaseSeat(client, actor, { ...seat, studyId: r.studyId, runId }, r.distinct)
        if (taken.refused) return null
        return { none: false as const, ...seat, leaseUntil: taken.leaseUntil as Date }
      })
      if (!got) continue
      if (got.none) throw new AppError(404, 'Nothing is left for you to claim in this run.')
      await publishSession(got.sessionId, runId, { type: 'status', status: got.status })
      return { sessionId: got.sessionId, seat: got.seat, leaseUntil: got.leaseUntil }
    }
    throw conflict('Every seat picked for you was taken meanwhile; ask again.')
  },
})

/**
 * The seats a researcher can give in a study (`sessions.assign`): per run still going and claimable
 * person's seat, how many of its open sessions have that seat free (never claimed, given back, or
 * lapsed). Seats all taken are left out.
 */
export const listOpenSeats = defineOperation({
  name: 'sessions.open-seats',
  scope: 'work:assign',
  input: z.object({ studyId: id }),
  async run(actor, { studyId }) {
    await requireStudyAccess(db, actor, studyId, 'write')
    const { rows } = await sql().query<{
      runId: string
      runName: string
      protocol: string
      seat: string
      free: number
    }>(
      `SELECT e.id AS "runId", e.name AS "runName", e.protocol, p.seat, count(*)::int AS free
       FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId" JOIN "Run" e ON e.id = s."runId"
       WHERE e."studyId" = $1 AND e.status NOT IN ('done', 'cancelled') AND p.claimable AND ${freeSql()}
         AND s.status NOT IN ('done', 'cancelled')
       GROUP BY e.id, e.name, e.protocol, e."createdAt", p.seat
       ORDER BY e."createdAt" DESC, p.seat`,
      [studyId],
    )
    const plugins = new Map((await allPlugins()).map((p) => [p.protocol.id, p]))
    return rows.map((r) => ({
      ...r,
      seatLabel: plugins.get(r.protocol)?.protocol.seats.find((d) => d.name === r.seat)?.label ?? r.seat,
    }))
  },
})

/**
 * A researcher names a member of the study on up to `count` open sessions of a run, in a claimable
 * seat no one holds (oldest first: by repetition, then position). The seat is theirs for good, as a
 * seat named at the run's creation (no lease; they may give it back, as a claim), and the sessions
 * appear in their work queue. Each seat is taken as a claim takes it (`seatPerson`: one session per
 * item in a distinct-claimants run, never a second seat of a session). Refused, writing nothing: a
 * person who is not a member or whose study role does not take part (400), a seat that is not a
 * claimable person's seat (400), a run of another study (404), a finished run or no free seat (409).
 * One audit row per session named.
 */
export const assignSeats = defineOperation({
  name: 'sessions.assign',
  scope: 'work:assign',
  input: z.object({
    studyId: id,
    runId: z.string({ error: 'Choose a run.' }).trim().min(1, 'Choose a run.').max(100),
    seat: z.string({ error: 'Choose a seat.' }).trim().min(1, 'Choose a seat.').max(60),
    userId: z.string({ error: 'Choose a person.' }).trim().min(1, 'Choose a person.').max(100),
    count: z.coerce
      .number({ error: 'Enter how many sessions.' })
      .int('Enter a whole number of sessions.')
      .min(1, 'Give at least one session.')
      .max(1000, 'Give at most 1,000 sessions at once.')
      .default(1),
  }),
  async run(actor, { studyId, runId, seat, userId, count }) {
    await requireStudyAccess(db, actor, studyId, 'write')
    const run = await db.run.findFirst({
      where: { id: runId, studyId },
      select: { id: true, name: true, status: true, seats: true, distinctClaimants: true },
    })
    if (!run) throw notFound('Run')
    if (run.status === 'done' || run.status === 'cancelled')
      throw conflict(`The run is ${run.status}; its seats can no longer be given.`)
    const fill = Seats.safeParse(run.seats).data?.[seat]
    if (!fill) throw badRequest(`This run has no seat "${seat}".`, { seat: ['Choose a seat of the run.'] })
    if (fill.kind !== 'human')
      throw badRequest(`The ${seat} seat is filled by ${kindLabel(fill.kind)}, not a person.`, {
        seat: ['Choose a seat people fill.'],
      })
    if (!fill.claimable)
      throw badRequest(`The ${seat} seat is named for one person in this run; only claimable seats can be given.`, {
        seat: ['Choose a claimable seat.'],
      })
    const person = await db.user.findUnique({
      where: { id: userId },
      select: {
        email: true,
        role: true,
        disabled: true,
        memberships: { where: { studyId }, select: { role: true } },
      },
    })
    const memberRole = person?.memberships[0]?.role
    if (!person || !memberRole)
      throw badRequest('Seats can only be given to members of the study.', { userId: ['Choose a member.'] })
    if (person.disabled)
      throw badRequest(`${person.email} is disabled and cannot take part.`, { userId: ['Choose an active member.'] })
    if (!mayTakePart(person.role as Role, memberRole))
      throw badRequest(`${person.email} does not take part in this study's sessions (their role only reads them).`, {
        userId: ['Choose a member who takes part.'],
      })
    const named = await pgTransaction(async (client) => {
      const { rows: open } = await client.query<{ sessionId: string; status: string }>(
        `SELECT p."sessionId", s.status FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
         WHERE s."runId" = $1 AND p.seat = $2 AND p.claimable AND ${freeSql()}
           AND s.status NOT IN ('done', 'cancelled')
         ORDER BY s.repetition, s.position, s.id`,
        [runId, seat],
      )
      const done: Array<{ sessionId: string; status: string }> = []
      for (const o of open) {
        if (done.length >= count) break
        const taken = await seatPerson(client, {
          sessionId: o.sessionId,
          seat,
          userId,
          runId: run.distinctClaimants ? runId : null,
          leaseSeconds: null,
        })
        if (taken.refused) continue
        await writeAuditSql(client, {
          actor: actorRef(actor),
          action: 'session.assign',
          resourceType: 'session',
          resourceId: o.sessionId,
          studyId,
          after: { seat, userId, email: person.email },
        })
        done.push(o)
      }
      if (!done.length) throw conflict(`No open session of ${run.name} has the ${seat} seat free for ${person.email}.`)
      return done
    })
    for (const o of named) await publishSession(o.sessionId, runId, { type: 'status', status: o.status })
    return { runId, seat, userId, email: person.email, requested: count, sessionIds: named.map((o) => o.sessionId) }
  },
})

/**
 * Renew the caller's claim of a claimable seat (the open turn page calls it a third of the lease
 * apart): the lease runs PARLEY_SEAT_LEASE_SECONDS from now. Only while they hold it: a lapsed claim
 * is a 409 (claim it again). A seat named for them needs no renewal (`leaseUntil` null). Not audited:
 * it changes no study data (the claim and the turns are audited).
 */
export const renewLease = defineOperation({
  name: 'sessions.heartbeat',
  scope: 'work:submit',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const ttl = leaseSeconds()
    // A member whose study role does not take part (made a viewer since the claim) renews nothing.
    const { rows: member } = await sql().query<{ role: string }>(
      `SELECT sm.role FROM "StudyMember" sm JOIN "ProtocolSession" s ON s."studyId" = sm."studyId"
       WHERE s.id = $1 AND sm."userId" = $2`,
      [sessionId, actor.userId],
    )
    const memberRole = member[0]?.role
    if (memberRole && !mayTakePart(actor.role, memberRole)) {
      const seated = await sql().query('SELECT 1 FROM "SessionSeat" WHERE "sessionId" = $1 AND "userId" = $2', [
        sessionId,
        actor.userId,
      ])
      if (!seated.rowCount) throw notFound('Session')
      throw forbidden(NOT_TAKING_PART)
    }
    const { rows } = await sql().query<{ seat: string; leaseUntil: Date | null }>(
      `UPDATE "SessionSeat" p
       SET "leaseUntil" = CASE WHEN p."leaseUntil" IS NULL THEN NULL ELSE now() + make_interval(secs => $3) END
       FROM "ProtocolSession" s
       WHERE s.id = p."sessionId" AND p."sessionId" = $1 AND ${holdsSql('$2')} AND s.status NOT IN ('done', 'cancelled')
       RETURNING p.seat, p."leaseUntil"`,
      [sessionId, actor.userId, ttl],
    )
    const claim = rows.find((r) => r.leaseUntil) ?? rows[0]
    if (claim) return { sessionId, seat: claim.seat, leaseUntil: claim.leaseUntil, seconds: ttl }
    const { rows: had } = await sql().query<{ seat: string; open: boolean }>(
      `SELECT p.seat, s.status NOT IN ('done', 'cancelled') AS open
       FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
       WHERE p."sessionId" = $1 AND p."userId" = $2 LIMIT 1`,
      [sessionId, actor.userId],
    )
    if (!had[0]) return notSeated(actor, sessionId)
    if (!had[0].open) throw conflict('This session is over; there is no claim to renew.')
    throw conflict(`Your claim of the ${had[0].seat} seat lapsed; claim it again if it is still free.`)
  },
})

/**
 * Give a claimed seat back (the person stops): the seat is free at once for the next member, the
 * turns already sent stay. Only the holder; a seat named for a person is theirs and cannot be given
 * back (409: a researcher changes the run's seats), nor a seat of a finished session. Audited.
 */
export const releaseSeat = defineOperation({
  name: 'sessions.release',
  scope: 'work:submit',
  input: z.object({ sessionId: id, seat: z.string().trim().min(1).max(60).optional() }),
  async run(actor, { sessionId, seat }) {
    const out = await pgTransaction(async (client) => {
      const { rows } = await client.query<{
        seat: string
        claimable: boolean
        status: string
        studyId: string
        runId: string | null
      }>(
        `SELECT p.seat, p.claimable, s.status, s."studyId", s."runId"
         FROM "SessionSeat" p JOIN "ProtocolSession" s ON s.id = p."sessionId"
         WHERE p."sessionId" = $1 AND p."userId" = $2 AND ($3::text IS NULL OR p.seat = $3)
         ORDER BY p.claimable DESC, p.seat
         FOR UPDATE OF p`,
        [sessionId, actor.userId, seat ?? null],
      )
      const held = rows[0]
      if (!held) return null
      if (!held.claimable)
        throw conflict(
          `The ${held.seat} seat is named for you; it cannot be given back (a researcher of the study can change the run's seats).`,
        )
      if (held.status === 'done' || held.status === 'cancelled')
        throw conflict('This session is over; its seats stay as they were.')
      await client.query(
        `UPDATE "SessionSeat" SET "userId" = NULL, "claimedAt" = NULL, "leaseUntil" = NULL
         WHERE "sessionId" = $1 AND seat = $2`,
        [sessionId, held.seat],
      )
      await writeAuditSql(client, {
        actor: actorRef(actor),
        action: 'session.release',
        resourceType: 'session',
        resourceId: sessionId,
        studyId: held.studyId,
        before: { seat: held.seat, userId: actor.userId },
      })
      return held
    })
    if (!out) return notSeated(actor, sessionId)
    await publishSession(sessionId, out.runId, { type: 'status', status: out.status })
    return { sessionId, seat: out.seat }
  },
})

// ---------------------------------------------------------------------------------------------
// The inspector
// ---------------------------------------------------------------------------------------------

/**
 * D (the session and its instance snapshot), M (every message body), C (what each sender was
 * conditioned on) and every LLM call the session made, with its exact request (images by reference),
 * and every program its steps ran (ProgramRun: input, output, exit status, limits hit, duration).
 * Researchers only (`work:read-study`).
 */
export const inspectSession = defineOperation({
  name: 'sessions.inspect',
  scope: 'work:read-study',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const s = await db.protocolSession.findUnique({
      where: { id: sessionId },
      include: {
        messages: { orderBy: { seq: 'asc' } },
        contexts: { orderBy: { seq: 'asc' } },
        run: { select: { id: true, name: true } },
        study: { select: { id: true, name: true } },
        people: { select: { seat: true, claimable: true, user: { select: { email: true } } } },
      },
    })
    if (!s) throw notFound('Session')
    await requireStudyAccess(db, actor, s.studyId, 'read')
    const plugin = await pluginFor(s.protocol)
    const calls = await db.llmCall.findMany({
      where: { sessionRef: s.id },
      orderBy: { createdAt: 'asc' },
      select: {
        id: true,
        createdAt: true,
        purpose: true,
        messageRef: true,
        modelRequested: true,
        status: true,
        errorKind: true,
        attempt: true,
        error: true,
        request: true,
        response: true,
        tokensIn: true,
        tokensOut: true,
        latencyMs: true,
        costUsd: true,
        cached: true,
        connectionId: true,
        modelReported: true,
      },
    })
    const programRuns = await db.programRun.findMany({
      where: { sessionId: s.id },
      orderBy: [{ seq: 'asc' }, { startedAt: 'asc' }, { callIndex: 'asc' }],
    })
    const seats = Seats.safeParse(s.seats)
    const instance = (s.instance ?? {}) as { datasetId?: unknown; input?: unknown }
    const datasetId = typeof instance.datasetId === 'string' ? instance.datasetId : null
    // Strings of the instance's input that name an image of its dataset (an X-ray): drawn, not printed.
    const names =
      instance.input && typeof instance.input === 'object'
        ? Object.values(instance.input).filter((v): v is string => typeof v === 'string' && v.length <= 300)
        : []
    const [connections, assets] = await Promise.all([
      connectionNames([
        ...(seats.success ? llmRefs(seats.data) : []),
        ...calls.flatMap((c) => (c.connectionId ? [{ connectionId: c.connectionId }] : [])),
      ]),
      datasetId && names.length
        ? db.asset.findMany({ where: { datasetId, name: { in: names } }, select: { name: true } })
        : [],
    ])
    const authors = await db.user.findMany({
      where: { id: { in: s.messages.map((m) => m.authorUserId).filter((x): x is string => !!x) } },
      select: { id: true, email: true },
    })
    const email = new Map(authors.map((u) => [u.id, u.email]))
    return {
      session: { ...s, protocolLabel: plugin.protocol.label },
      /** The protocol's seats, to name them. */
      seatDecls: plugin.protocol.seats.map((d) => ({ name: d.name, label: d.label })),
      /** The connections of the seats and of the calls, by id: each model named with its connection. */
      connections,
      /** Names in the instance's input that are images of its dataset (`/api/assets/<datasetId>/<name>`). */
      assets: assets.map((a) => a.name),
      messages: s.messages.map((m) => ({
        ...m,
        author: m.authorUserId ? (email.get(m.authorUserId) ?? 'a removed user') : null,
      })),
      calls,
      /** Every program the session's steps ran (ctx.exec), by message number. */
      programRuns,
    }
  },
})
