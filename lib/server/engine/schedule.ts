import { randomUUID } from 'node:crypto'
import type { BaseMessage } from '@/lib/protocols/types'
import { sql } from '@/lib/server/db'
import {
  type InstanceRow,
  type ProtocolPlugin,
  type ScheduleContext,
  type ScheduleDecision,
  type ScheduledSession,
  type SessionSpec,
  splitConfig,
} from '@/lib/server/engine/plugin'
import { pluginFor } from '@/lib/server/engine/plugins'
import { humanSeats, Seats } from '@/lib/server/engine/seats'
import { admitSessions } from '@/lib/server/engine/step-queue'
import { badRequest, conflict } from '@/lib/server/errors'
import { publish } from '@/lib/server/live'
import { log } from '@/lib/server/log'
import { type AuditEntry, writeAuditSql } from '@/lib/server/audit'
import type pg from 'pg'

/**
 * Run scheduling and session lineage. A run starts from its plan's grid (prepare.ts); a protocol's
 * scheduler (`plugin.schedule`) may hold sessions of the grid waiting, add sessions when the run
 * starts and each time one of its sessions ends done (new sessions or forks of existing ones), start
 * waiting ones, report its progress and say whether the run is done. Every call happens inside one
 * transaction that holds the run's row lock (SELECT … FOR UPDATE), so two sessions ending at once are
 * handled one after the other, each seeing what the other created; the session's `scheduledAt`,
 * written in the same transaction, makes it once per session however often its end is reported (a
 * job run twice, a finish after an append).
 *
 * A fork copies its parent's first `forkSeq` messages and their context snapshots into itself in the
 * transaction that creates it: replay, the pages, exports and the inspector all read one session's
 * own log, unchanged.
 */

type PgQuery = (text: string, values?: unknown[]) => Promise<{ rows: any[]; rowCount?: number | null }>
interface Client {
  query: PgQuery
}

interface RunRow {
  id: string
  studyId: string
  protocol: string
  task: string
  datasetId: string
  config: unknown
  seats: unknown
  status: string
  schedule: { done?: boolean | null; progress?: { done: number; total: number } | null; started?: boolean } | null
}

const lockRun = async (client: Client, runId: string): Promise<RunRow | undefined> =>
  (
    await client.query(
      `SELECT id, "studyId", protocol, task, "datasetId", config, seats, status, schedule
       FROM "Run" WHERE id = $1 FOR UPDATE`,
      [runId],
    )
  ).rows[0] as RunRow | undefined

const SESSION_COLS = `id, key, "parentId", "forkSeq", repetition, position, status, "instanceId"`

function contextOf(client: Client, run: RunRow, plugin: ProtocolPlugin): ScheduleContext {
  return {
    run: { id: run.id, studyId: run.studyId, config: splitConfig(plugin, run.config, run.task), status: run.status },
    async sessions(where = {}) {
      const { rows } = await client.query(
        `SELECT ${SESSION_COLS} FROM "ProtocolSession"
         WHERE "runId" = $1 AND ($2::int IS NULL OR repetition = $2)
         ORDER BY "createdAt", repetition, position, key`,
        [run.id, where.repetition ?? null],
      )
      return rows as ScheduledSession[]
    },
    async messages(sessionId) {
      const { rows } = await client.query(
        `SELECT m.body FROM "ProtocolMessage" m JOIN "ProtocolSession" s ON s.id = m."sessionId"
         WHERE m."sessionId" = $1 AND s."runId" = $2 ORDER BY m.seq`,
        [sessionId, run.id],
      )
      return rows.map((r) => r.body as BaseMessage)
    },
  }
}

/** Runs `fn` in a transaction holding the run's row lock (on its own connection, or the caller's). */
async function underRunLock<T>(
  runId: string,
  fn: (client: Client, run: RunRow) => Promise<T>,
  client?: Client,
): Promise<T | undefined> {
  if (client) {
    const run = await lockRun(client, runId)
    return run ? fn(client, run) : undefined
  }
  const own = await sql().connect()
  try {
    await own.query('BEGIN')
    const run = await lockRun(own, runId)
    const out = run ? await fn(own, run) : undefined
    await own.query('COMMIT')
    return out
  } catch (err) {
    await own.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    own.release()
  }
}

const defaultSnapshot = (row: InstanceRow) => ({
  input: row.input,
  prediction: row.prediction,
  explanation: row.explanation,
})

/**
 * Create sessions of a run (inside the caller's transaction, which holds the run's lock). A key the
 * run has already: skipped (`onDuplicate: 'skip'`, a scheduler asked again) or refused with a 409 that
 * rolls back everything (`'refuse'`). Returns the ids created, with whether each is queued.
 */
async function insertSessions(
  client: Client,
  run: RunRow,
  plugin: ProtocolPlugin,
  specs: readonly SessionSpec[],
  onDuplicate: 'skip' | 'refuse',
): Promise<{ id: string; queued: boolean }[]> {
  const out: { id: string; queued: boolean }[] = []
  for (const spec of specs) {
    if (typeof spec.key !== 'string' || !spec.key || spec.key.length > 200)
      throw badRequest('A scheduled session needs a key of 1 to 200 characters.')
    let source: {
      config: unknown
      instance: unknown
      instanceId: string | null
      seats: unknown
      repetition: number
      position: number
      protocolVersion: string
    }
    if (spec.parentId) {
      const { rows } = await client.query(
        `SELECT s.config, s.instance, s."instanceId", s.seats, s.repetition, s.position, s."protocolVersion",
                (SELECT count(*)::int FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS messages
         FROM "ProtocolSession" s WHERE s.id = $1 AND s."runId" = $2`,
        [spec.parentId, run.id],
      )
      const parent = rows[0]
      if (!parent) throw badRequest(`The parent session ${spec.parentId} is not a session of this run.`)
      const s = spec.forkSeq ?? 0
      if (!Number.isInteger(s) || s < 0 || s > parent.messages)
        throw badRequest(`A fork starts from 0 to ${parent.messages} of its parent's messages, not ${spec.forkSeq}.`)
      source = parent
    } else {
      if (!spec.instanceId) throw badRequest('A scheduled session names its parent or an instance.')
      const { rows } = await client.query(
        `SELECT id, "datasetId", index, input, prediction, explanation, meta FROM "Instance" WHERE id = $1 AND "datasetId" = $2`,
        [spec.instanceId, run.datasetId],
      )
      const row = rows[0] as InstanceRow | undefined
      if (!row) throw badRequest(`The instance ${spec.instanceId} is not in the run's dataset.`)
      source = {
        config: run.config,
        instance: ((await plugin.setup()).snapshot ?? defaultSnapshot)(row),
        instanceId: row.id,
        seats: run.seats,
        repetition: 1,
        position: 0,
        protocolVersion: plugin.protocol.version,
      }
    }
    const seats = Seats.parse(spec.seats ?? source.seats)
    const id = randomUUID()
    const { rows: inserted } = await client.query(
      `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task,
         "instanceId", instance, seats, repetition, position, key, "parentId", "forkSeq", status, "updatedAt")
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13, $14, $15, $16, now())
       ON CONFLICT ("runId", key) DO NOTHING RETURNING id`,
      [
        id,
        run.studyId,
        run.id,
        run.protocol,
        source.protocolVersion,
        JSON.stringify(source.config),
        run.task,
        source.instanceId,
        JSON.stringify(source.instance),
        JSON.stringify(seats),
        spec.repetition ?? source.repetition,
        spec.position ?? source.position,
        spec.key,
        spec.parentId ?? null,
        spec.parentId ? (spec.forkSeq ?? 0) : null,
        spec.waiting ? 'waiting' : 'queued',
      ],
    )
    if (!inserted.length) {
      if (onDuplicate === 'refuse') throw conflict(`The run has a session with the key "${spec.key}" already.`)
      log().warn({ runId: run.id, key: spec.key }, 'the scheduler asked again for a session that exists')
      continue
    }
    for (const h of humanSeats(seats))
      await client.query(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId", claimable) VALUES ($1, $2, $3, $4)`, [
        id,
        h.seat,
        h.userId,
        h.claimable,
      ])
    if (spec.parentId && (spec.forkSeq ?? 0) > 0) {
      // The prefix is copied as it was written (who wrote it, the call behind it, its context).
      await client.query(
        `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, body, label, value, detail,
           payload, "llmCallId", "authorUserId", "createdAt")
         SELECT gen_random_uuid()::text, $1, seq, sender, receiver, body, label, value, detail, payload,
           "llmCallId", "authorUserId", "createdAt"
         FROM "ProtocolMessage" WHERE "sessionId" = $2 AND seq <= $3`,
        [id, spec.parentId, spec.forkSeq],
      )
      await client.query(
        `INSERT INTO "ContextSnapshot" ("sessionId", seq, context, "createdAt")
         SELECT $1, seq, context, "createdAt" FROM "ContextSnapshot" WHERE "sessionId" = $2 AND seq <= $3`,
        [id, spec.parentId, spec.forkSeq],
      )
    }
    out.push({ id, queued: !spec.waiting })
  }
  return out
}

/** Apply a decision inside the run's transaction; returns whether sessions were queued. */
async function applyDecision(
  client: Client,
  run: RunRow,
  plugin: ProtocolPlugin,
  d: ScheduleDecision,
  extra: { started?: boolean } = {},
): Promise<boolean> {
  const created = d.create?.length ? await insertSessions(client, run, plugin, d.create, 'skip') : []
  let started = 0
  if (d.start?.length) {
    const r = await client.query(
      `UPDATE "ProtocolSession" SET status = 'queued', "updatedAt" = now()
       WHERE "runId" = $1 AND id = ANY($2) AND status = 'waiting'`,
      [run.id, d.start],
    )
    started = r.rowCount ?? 0
  }
  const patch: Record<string, unknown> = { ...extra }
  if (d.done !== undefined) patch.done = d.done
  if (d.progress) {
    const { done, total } = d.progress
    if (!Number.isFinite(done) || !Number.isFinite(total)) throw new Error('a schedule progress needs two numbers')
    patch.progress = { done, total }
  }
  if (Object.keys(patch).length || created.length)
    await client.query(
      `UPDATE "Run" SET schedule = COALESCE(schedule, '{}'::jsonb) || $2::jsonb,
         "sessionsCreated" = "sessionsCreated" + $3, "sessionsPlanned" = "sessionsPlanned" + $3, "updatedAt" = now()
       WHERE id = $1`,
      [run.id, JSON.stringify(patch), created.length],
    )
  return started > 0 || created.some((c) => c.queued)
}

/** Mark a running run done when none of its sessions is open and its scheduler did not say it goes on. */
async function closeIn(client: Client, runId: string): Promise<{ open: boolean; closed: boolean }> {
  const { rows } = await client.query(
    `WITH o AS (SELECT EXISTS (SELECT 1 FROM "ProtocolSession" WHERE "runId" = $1
                                AND status NOT IN ('done', 'cancelled')) AS open),
          u AS (UPDATE "Run" SET status = 'done', "updatedAt" = now()
                WHERE id = $1 AND status = 'running' AND NOT (SELECT open FROM o)
                  AND COALESCE((schedule->>'done')::boolean, true) RETURNING id)
     SELECT open, (SELECT count(*) FROM u) AS closed FROM o`,
    [runId],
  )
  return { open: !!rows[0]?.open, closed: Number(rows[0]?.closed ?? 0) > 0 }
}

/** Mark a running run done when none of its sessions is open (and its scheduler agrees). */
export async function closeIfFinished(runId: string): Promise<boolean> {
  const r = await closeIn({ query: (t, v) => sql().query(t, v) }, runId)
  if (r.closed) void publish(`run:${runId}`, { type: 'progress' })
  return !r.open
}

/**
 * After a session ended done (called after its commit, possibly more than once): under the run's
 * lock, the scheduler's `onSessionDone` once per session, what it decided, and the run closed when it
 * is finished. Sessions it queued go on the step queue while the run runs.
 */
export async function afterSessionDone(sessionId: string): Promise<void> {
  const { rows } = await sql().query<{ runId: string | null; protocol: string; config: unknown; task: string }>(
    `SELECT s."runId", s.protocol, r.config, r.task
     FROM "ProtocolSession" s JOIN "Run" r ON r.id = s."runId" WHERE s.id = $1`,
    [sessionId],
  )
  const row = rows[0]
  const runId = row?.runId
  if (!row || !runId) return
  const plugin = await pluginFor(row.protocol)
  const schedule = plugin.schedule
  const onDone = schedule?.onSessionDone
  // Without a scheduler to call (none, or none for this run), closing the run is one statement, no lock.
  if (!onDone || (schedule?.watches && !schedule.watches(splitConfig(plugin, row.config, row.task)))) {
    await closeIfFinished(runId)
    return
  }
  const r = await underRunLock(runId, async (client, run) => {
    let queued = false
    // Read under the lock: of two reports of one end, the second sees the first's scheduledAt.
    const { rows: s } = await client.query(
      `SELECT ${SESSION_COLS}, "scheduledAt" FROM "ProtocolSession" WHERE id = $1`,
      [sessionId],
    )
    const session = s[0] as (ScheduledSession & { scheduledAt: Date | null }) | undefined
    if (session && session.status === 'done' && !session.scheduledAt) {
      const { scheduledAt: _, ...seen } = session
      const decision = await onDone({ ...contextOf(client, run, plugin), session: seen })
      queued = await applyDecision(client, run, plugin, decision ?? {})
      await client.query(`UPDATE "ProtocolSession" SET "scheduledAt" = now() WHERE id = $1`, [sessionId])
    }
    const closed = await closeIn(client, runId)
    return { queued, closed: closed.closed, running: run.status === 'running' }
  })
  if (r?.queued && r.running) await admitSessions(runId)
  if (r?.queued || r?.closed) void publish(`run:${runId}`, { type: 'progress' })
}

/**
 * The run starts running (once): the scheduler's `onRunStart` adds its sessions, inside the caller's
 * transaction when given (which then queues them with the others).
 */
export async function runStarting(runId: string, client?: Client): Promise<void> {
  await underRunLock(
    runId,
    async (c, run) => {
      const plugin = await pluginFor(run.protocol)
      const onStart = plugin.schedule?.onRunStart
      if (!onStart || run.schedule?.started) return
      const decision = await onStart(contextOf(c, run, plugin))
      await applyDecision(c, run, plugin, decision ?? {}, { started: true })
    },
    client,
  )
}

/**
 * Create sessions of a run directly (a fork asked for by an operation or a test): in one transaction
 * under the run's lock; a key the run has already is refused (409) and nothing is written. Queued
 * sessions go on the step queue while the run runs. `reopen`: a run that is done runs again for them
 * (it closes again once none of its sessions is open), e.g. a person branching a finished episode.
 * `audit`: the audit row of the operation that asked, written in the same transaction.
 */
export async function createRunSessions(
  runId: string,
  specs: SessionSpec[],
  opts: { reopen?: boolean; audit?: (ids: string[]) => AuditEntry } = {},
): Promise<string[]> {
  const r = await underRunLock(runId, async (client, run) => {
    const plugin = await pluginFor(run.protocol)
    const made = await insertSessions(client, run, plugin, specs, 'refuse')
    let status = run.status
    if (opts.reopen && status === 'done' && made.some((m) => m.queued)) {
      await client.query(`UPDATE "Run" SET status = 'running', "updatedAt" = now() WHERE id = $1`, [runId])
      status = 'running'
    }
    if (made.length)
      await client.query(
        `UPDATE "Run" SET "sessionsCreated" = "sessionsCreated" + $2, "sessionsPlanned" = "sessionsPlanned" + $2
         WHERE id = $1`,
        [runId, made.length],
      )
    if (opts.audit) await writeAuditSql(client as unknown as pg.ClientBase, opts.audit(made.map((m) => m.id)))
    return { made, running: status === 'running', reopened: status !== run.status }
  })
  if (!r) throw badRequest('No such run.')
  if (r.running && r.made.some((m) => m.queued)) await admitSessions(runId)
  if (r.reopened) void publish(`run:${runId}`, { type: 'status', status: 'running' })
  return r.made.map((m) => m.id)
}
