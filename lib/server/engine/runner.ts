import { randomUUID } from 'node:crypto'
import { LlmError } from '@/lib/llm/client'
import { type AnyProtocol, type Ask, type BaseMessage, ProtocolError, replay } from '@/lib/protocols/types'
import { sql } from '@/lib/server/db'
import { isUniqueViolation } from '@/lib/server/errors'
import { execTools, StepAborted } from '@/lib/server/engine/exec'
import { llmTools } from '@/lib/server/engine/llm'
import {
  type AgentContext,
  type InstanceOf,
  type MessageOf,
  type ProtocolPlugin,
  type Produced,
  type SessionContext,
  type SessionEndReason,
  type SessionParser,
  type StateOf,
  type StepSession,
  splitConfig,
} from '@/lib/server/engine/plugin'
import { pluginFor } from '@/lib/server/engine/plugins'
import { Seats } from '@/lib/server/engine/seats'
import { afterSessionDone } from '@/lib/server/engine/schedule'
import { publish, publishSession } from '@/lib/server/live'
import { log } from '@/lib/server/log'
import { pgJson, pgText } from '@/lib/server/pg-text'

/**
 * The one runner (DESIGN.md "one runner"). A step loads a session (one statement), replays its log
 * through the protocol, asks `next`, and dispatches the ask to the seat's agent: a person leaves the
 * session `awaiting`; an LLM, proxy or program agent writes exactly one message, which is validated
 * with the protocol's `apply` before it is stored. M + C + the session's status are one statement
 * keyed by (session, seq), so a racing step gets `conflict` and nothing is written twice; the live
 * notice goes out after the commit. An LLM failure after the client's retries (or a message the
 * protocol refuses) stalls the session with the error and appends nothing: it stays resumable.
 * Within one job the session's state is carried from step to step, so a step costs one statement
 * besides its model calls.
 */

export interface Loaded {
  session: StepSession
  plugin: ProtocolPlugin
  ctx: SessionContext
  /** The logs of the run's earlier sessions of this repetition, read once per job. */
  earlierLogs?: Promise<BaseMessage[][]>
}

export type StepResult =
  | { kind: 'appended'; seq: number; next: Loaded; done: boolean }
  | { kind: 'done'; reason: string }
  | { kind: 'awaiting'; seat: string }
  | { kind: 'conflict'; seq: number }
  | { kind: 'stalled'; error: string }
  /** The run is not running (paused, cancelled, finished): nothing was done. */
  | { kind: 'paused' }
  /** The session waits (its run's scheduler holds it), or was cancelled. */
  | { kind: 'idle'; status: string }

/** Timing of every step (the runner's own time is totalMs − llmMs); used by the benchmarks. */
export type StepTiming = { kind: StepResult['kind']; totalMs: number; llmMs: number }
let stepObserver: ((t: StepTiming) => void) | undefined
export function observeSteps(fn: ((t: StepTiming) => void) | undefined) {
  stepObserver = fn
}

type Row = Omit<StepSession, 'messages'> & { messages: BaseMessage[] | null }

/**
 * The session, its messages' bodies and its run's status: one read-only statement
 * (every job starts with it; a write here would cost a commit per job on the hot path).
 */
export async function loadSession(sessionId: string): Promise<StepSession> {
  const { rows } = await sql().query<Row>(
    `SELECT s.id, s."studyId", s."runId", s.protocol, s.task, s.repetition, s.position, s.status,
            s."awaitingSeat", s.config, s.seats, s.instance, e.status AS "runStatus", s.key, s."parentId",
            s."forkSeq",
            (SELECT json_agg(m.body ORDER BY m.seq) FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS messages
     FROM "ProtocolSession" s LEFT JOIN "Run" e ON e.id = s."runId"
     WHERE s.id = $1`,
    [sessionId],
  )
  const row = rows[0]
  if (!row) throw new Error(`Session ${sessionId} does not exist.`)
  return { ...row, messages: row.messages ?? [] }
}

/** Parse a loaded session and replay its log. Throws for an unknown protocol or a corrupt log. */
export async function prepare(session: StepSession): Promise<Loaded> {
  const plugin = await pluginFor(session.protocol)
  return { session, plugin, ctx: parseSession(plugin, session) }
}

/**
 * A session as the hooks of its protocol's plugin see it: config and extras split by the plugin,
 * the instance parsed, the log replayed. Typed by the protocol it is given, so a protocol's own
 * operation (on a session it looked up) reads it as its hooks do; a session of another protocol
 * throws. Throws for a corrupt log.
 */
export function parseSession<P extends AnyProtocol, X = undefined>(
  parser: SessionParser<P, X>,
  session: StepSession,
): SessionContext<P, X> {
  const { protocol } = parser
  if (session.protocol !== protocol.id)
    throw new Error(`Session ${session.id} runs ${session.protocol}, not ${protocol.id}.`)
  const { config, extras } = splitConfig(parser, session.config, session.task)
  const instance: InstanceOf<P> = protocol.instance.parse(session.instance)
  const seats = Seats.parse(session.seats)
  const state: StateOf<P> = replay(protocol, config, instance, session.messages)
  // The log is P's: each message was accepted by P's `apply` when it was written, and `replay` just
  // ran every one through it again.
  const typed = session as StepSession<MessageOf<P>>
  return { session: typed, config, extras, instance, seats, state }
}

export interface StepOptions {
  /** Only step while the run is running (the job queue); the status is read with the session. */
  onlyIfRunning?: boolean
  /** The session as the previous step of this job left it. */
  loaded?: Loaded
}

export async function stepSession(sessionId: string, opts: StepOptions = {}): Promise<StepResult> {
  const clock = { llmMs: 0 }
  const t0 = performance.now()
  const r = await step(sessionId, clock, opts)
  stepObserver?.({ kind: r.kind, totalMs: performance.now() - t0, llmMs: clock.llmMs })
  return r
}

async function step(sessionId: string, clock: { llmMs: number }, opts: StepOptions): Promise<StepResult> {
  const loaded = opts.loaded?.session.id === sessionId ? opts.loaded : await prepare(await loadSession(sessionId))
  const { session, plugin, ctx } = loaded
  if (opts.onlyIfRunning && session.runId && session.runStatus !== 'running') return { kind: 'paused' }
  if (session.status === 'waiting' || session.status === 'cancelled') return { kind: 'idle', status: session.status }
  // On the queue a stalled session waits for a Retry (a stale duplicate job must not call the model).
  if (opts.onlyIfRunning && session.status === 'stalled') return { kind: 'idle', status: session.status }
  const ask = plugin.protocol.next(ctx.state) as Ask<string, string, string> | { done: true; reason: string }
  if (ask.done) {
    await finish(session, ask.reason)
    return { kind: 'done', reason: ask.reason }
  }
  const fill = ctx.seats[ask.seat]
  if (!fill) return markStalled(session, `internal: the ${ask.seat} seat is not filled.`)
  if (fill.kind === 'human') {
    await markAwaiting(session, ask.seat)
    return { kind: 'awaiting', seat: ask.seat }
  }
  const agent = fill.kind === 'program' ? plugin.agents.program?.[fill.program] : plugin.agents[fill.kind]
  if (!agent) return markStalled(session, `internal: no ${fill.kind} agent for the ${ask.seat} seat.`)
  const j = ask.j
  const dataset = (ctx.instance as { datasetId?: unknown } | null)?.datasetId
  const watched = Object.entries(ctx.seats).some(([seat, f]) => seat !== ask.seat && f.kind === 'human')
  const timeoutSeconds =
    fill.timeoutSeconds ??
    (fill.kind === 'program' ? plugin.timeouts?.program?.[fill.program] : plugin.timeouts?.[fill.kind])
  const seatLabel = plugin.protocol.seats.find((d) => d.name === ask.seat)?.label ?? ask.seat
  const watch = watchStep(session, seatLabel, timeoutSeconds)
  const agentCtx: AgentContext = {
    ...ctx,
    ask,
    fill,
    watched,
    signal: watch.signal,
    llm: llmTools({
      studyId: session.studyId,
      sessionId,
      seq: j,
      ...(typeof dataset === 'string' ? { datasetId: dataset } : {}),
      clock,
      seat: ask.seat,
      stream: (seat) => streamTo(sessionId, j, seat),
      signal: watch.signal,
    }),
    exec: execTools({ plugin, sessionId, seq: j, signal: watch.signal }),
    earlierSessions: () => {
      loaded.earlierLogs ??= earlierLogs(session)
      return loaded.earlierLogs
    },
  }
  try {
    let produced: Produced
    try {
      produced = await untilAborted(agent(agentCtx), watch.signal)
    } finally {
      watch.stop()
    }
    const after = plugin.protocol.apply(ctx.state, produced.message)
    const next = plugin.protocol.next(after) as Ask<string, string, string> | { done: true; reason: string }
    const awaitingSeat = humanSeatAsked(next, ctx.seats)
    const runStatus = await appendMessage(loaded, produced, next.done ? next.reason : null, awaitingSeat)
    notifyAppended(session, j, next.done ? next.reason : null)
    const nextLoaded: Loaded = {
      ...loaded,
      session: {
        ...session,
        status: next.done ? 'done' : awaitingSeat ? 'awaiting' : 'queued',
        awaitingSeat,
        runStatus,
        messages: [...session.messages, produced.message],
      },
      ctx: { ...ctx, state: after },
    }
    nextLoaded.ctx.session = nextLoaded.session
    if (next.done) {
      await afterSessionDone(sessionId)
      await sessionEnded(session, 'done')
    }
    return { kind: 'appended', seq: j, next: nextLoaded, done: next.done }
  } catch (err) {
    if (isUniqueViolation(err)) return { kind: 'conflict', seq: j }
    // The step was stopped while its agent worked (whatever the agent threw then): nothing is appended.
    if (watch.signal.aborted) {
      const why = watch.signal.reason
      if (why instanceof StepAborted && why.kind === 'timeout') return markStalled(session, `timeout: ${why.message}`)
      // Cancelled: the run's cancel has marked the session. Paused: it stays queued, for the resume.
      return why instanceof StepAborted && why.kind === 'paused'
        ? { kind: 'paused' }
        : { kind: 'idle', status: 'cancelled' }
    }
    if (err instanceof LlmError) return markStalled(session, `${err.kind}: ${err.message}`)
    if (err instanceof ProtocolError) return markStalled(session, `${err.code}: ${err.message}`)
    throw err
  }
}

/** How often a step whose agent is still working reads its run's status (pause, cancel). */
export const WATCH_INTERVAL_MS = 500

/**
 * The step's `ctx.signal`: aborted with a `StepAborted` when the seat's time limit passes, or when the
 * run is paused or cancelled (or the session cancelled) while the agent works. The status is polled,
 * one primary-key read every WATCH_INTERVAL_MS, starting only after the first interval, so a step
 * shorter than that (most are) costs nothing; a LISTEN connection per worker was the alternative, but
 * it would have to survive reconnects and still re-read the status on every progress event.
 */
function watchStep(
  session: Pick<StepSession, 'id' | 'runId'>,
  seatLabel: string,
  timeoutSeconds: number | undefined,
): { signal: AbortSignal; stop(): void } {
  const ac = new AbortController()
  let stopped = false
  const limit =
    timeoutSeconds === undefined
      ? undefined
      : setTimeout(
          () => ac.abort(new StepAborted('timeout', `The ${seatLabel} seat took longer than ${timeoutSeconds} s.`)),
          timeoutSeconds * 1000,
        )
  let pollTimer: ReturnType<typeof setTimeout> | undefined
  const poll = async () => {
    if (stopped || ac.signal.aborted) return
    try {
      const { rows } = await sql().query<{ run: string | null; status: string }>(
        `SELECT e.status AS run, s.status FROM "ProtocolSession" s LEFT JOIN "Run" e ON e.id = s."runId"
         WHERE s.id = $1`,
        [session.id],
      )
      const r = rows[0]
      if (!stopped && !ac.signal.aborted) {
        if (!r || r.run === 'cancelled' || r.status === 'cancelled')
          ac.abort(new StepAborted('cancelled', 'The run was cancelled.'))
        else if (r.run === 'paused') ac.abort(new StepAborted('paused', 'The run was paused.'))
      }
    } catch (err) {
      log().warn({ err, sessionId: session.id }, 'could not read the run status while a step works')
    }
    if (!stopped && !ac.signal.aborted) pollTimer = setTimeout(poll, WATCH_INTERVAL_MS)
  }
  pollTimer = setTimeout(poll, WATCH_INTERVAL_MS)
  return {
    signal: ac.signal,
    stop() {
      stopped = true
      clearTimeout(limit)
      clearTimeout(pollTimer)
    },
  }
}

/** The agent's answer, or the signal's reason as soon as it aborts (an agent that ignores it is not waited for). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {})
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => {})
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * The plugin's `onSessionEnd` for a session that just ended (done, cancelled, stalled): called once per
 * end by whoever ended it; its errors are logged, never thrown.
 */
export async function sessionEnded(
  s: { id: string; studyId: string; runId: string | null; protocol: string },
  reason: SessionEndReason,
): Promise<void> {
  try {
    const plugin = await pluginFor(s.protocol)
    await plugin.onSessionEnd?.({ sessionId: s.id, studyId: s.studyId, runId: s.runId, protocol: s.protocol }, reason)
  } catch (err) {
    log().error({ err, sessionId: s.id, reason }, 'the plugin failed at the end of a session')
  }
}

/** The bodies of the run's earlier sessions of a session's repetition, by position. */
async function earlierLogs(session: StepSession): Promise<BaseMessage[][]> {
  if (!session.runId) return []
  const { rows } = await sql().query<{ messages: BaseMessage[] | null }>(
    `SELECT (SELECT json_agg(m.body ORDER BY m.seq) FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS messages
     FROM "ProtocolSession" s
     WHERE s."runId" = $1 AND s.repetition = $2 AND s.position < $3
     ORDER BY s.position`,
    [session.runId, session.repetition, session.position],
  )
  return rows.map((r) => r.messages ?? [])
}

/** Runs one statement and returns its rows (the pg pool by default; a `pgTransaction` client for a person's turn). */
export type Exec = <R>(text: string, params: unknown[]) => Promise<R[]>
const pgExec: Exec = async <R>(text: string, params: unknown[]) => (await sql().query(text, params)).rows as R[]

/**
 * The seat a person fills that the protocol asks next, if any: the append that leads to it marks the
 * session awaiting that seat in the same statement, so no reader sees the person's turn in the
 * messages while the session still says queued (the work queue lists sessions by their status).
 */
export function humanSeatAsked(next: Ask<string, string, string> | { done: true }, seats: Seats): string | null {
  return !next.done && seats[next.seat]?.kind === 'human' ? next.seat : null
}

/**
 * Append one message: M + C + the session's status (and its stop reason when this message ends the
 * session) in one statement: done with a reason, awaiting when the next seat is a person's
 * (`awaitingSeat`), queued for the runner otherwise. Returns the run's status as of the append. Throws
 * a unique violation when another writer took the message number. The caller sends the live notice
 * after the commit.
 */
export async function appendMessage(
  loaded: Loaded,
  produced: Produced,
  doneReason: string | null,
  awaitingSeat: string | null,
  author?: { userId: string },
  exec: Exec = pgExec,
): Promise<string | null> {
  const { session, plugin, ctx } = loaded
  const m = produced.message
  const p = plugin.project(m, produced.meta, ctx.seats)
  const rows = await exec<{ runStatus: string | null }>(
    `WITH m AS (
       INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, body, label, value, detail,
                                      payload, "llmCallId", "authorUserId")
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10::jsonb, $11, $12)
       RETURNING "sessionId"
     ), c AS (
       INSERT INTO "ContextSnapshot" ("sessionId", seq, context)
       SELECT "sessionId", $3, $13::jsonb FROM m
     ), u AS (
       UPDATE "ProtocolSession"
       SET status = CASE WHEN $14::text IS NOT NULL THEN 'done' WHEN $15::text IS NOT NULL THEN 'awaiting'
                         ELSE 'queued' END,
           "stopReason" = $14,
           "doneAt" = CASE WHEN $14::text IS NULL THEN NULL ELSE now() END,
           "stallError" = NULL, "awaitingSeat" = CASE WHEN $14::text IS NULL THEN $15::text END, "updatedAt" = now()
       WHERE id = (SELECT "sessionId" FROM m)
       RETURNING id
     )
     SELECT (SELECT count(*) FROM u) AS updated, (SELECT status FROM "Run" WHERE id = $16) AS "runStatus"`,
    [
      randomUUID(),
      session.id,
      m.seq,
      m.sender,
      p.receiver,
      pgJson(m),
      pgText(p.label ?? null),
      pgText(p.value ?? null),
      pgText(p.detail ?? null),
      pgJson(produced.meta ?? {}),
      produced.callId ?? null,
      author?.userId ?? null,
      pgJson(produced.context ?? null),
      doneReason,
      awaitingSeat,
      session.runId,
    ],
  )
  return rows[0]?.runStatus ?? null
}

/** The live notice of an append, sent after its commit (a NOTIFY inside would serialise commits). */
export function notifyAppended(session: Pick<StepSession, 'id' | 'runId'>, seq: number, doneReason: string | null) {
  void publishSession(
    session.id,
    session.runId,
    doneReason ? { type: 'status', status: 'done' } : { type: 'message', seq },
  )
}

interface SessionRef {
  id: string
  runId: string | null
  status: string
  awaitingSeat?: string | null
}

/** The session ended (its protocol says Done): record it once, then tell its run's scheduler and close the run. */
async function finish(s: SessionRef, reason: string): Promise<void> {
  if (s.status !== 'done') {
    const { rows } = await sql().query<Ended>(
      `UPDATE "ProtocolSession" SET status = 'done', "stopReason" = $2, "doneAt" = COALESCE("doneAt", now()),
         "stallError" = NULL, "awaitingSeat" = NULL, "updatedAt" = now()
       WHERE id = $1 AND status <> 'done'
       RETURNING id, "studyId", "runId", protocol`,
      [s.id, reason],
    )
    void publishSession(s.id, s.runId, { type: 'status', status: 'done' })
    await afterSessionDone(s.id)
    if (rows[0]) await sessionEnded(rows[0], 'done')
    return
  }
  await afterSessionDone(s.id)
}

type Ended = { id: string; studyId: string; runId: string | null; protocol: string }

export async function markAwaiting(s: SessionRef, seat: string): Promise<void> {
  if (s.status === 'awaiting' && s.awaitingSeat === seat) return
  await sql().query(
    `UPDATE "ProtocolSession" SET status = 'awaiting', "awaitingSeat" = $2, "stallError" = NULL, "updatedAt" = now()
     WHERE id = $1 AND status NOT IN ('done', 'cancelled')`,
    [s.id, seat],
  )
  await publishSession(s.id, s.runId, { type: 'status', status: 'awaiting' })
}

/** Nothing was appended: the session stays resumable from the message it could not write. */
export async function markStalled(s: SessionRef, error: string): Promise<{ kind: 'stalled'; error: string }> {
  // `was`: a session that was stalled already (stepped again without a Retry) did not end again.
  const { rows } = await sql().query<Ended & { was: string }>(
    `WITH old AS (SELECT status FROM "ProtocolSession" WHERE id = $1 FOR UPDATE)
     UPDATE "ProtocolSession" SET status = 'stalled', "stallError" = $2, "updatedAt" = now()
     WHERE id = $1 AND status NOT IN ('done', 'cancelled')
     RETURNING id, "studyId", "runId", protocol, (SELECT status FROM old) AS was`,
    [s.id, pgText(error.slice(0, 4000))],
  )
  await publishSession(s.id, s.runId, { type: 'status', status: 'stalled' })
  const ended = rows[0]
  if (ended && ended.was !== 'stalled') await sessionEnded(ended, 'stalled')
  return { kind: 'stalled', error }
}

/** Publishes the text streamed so far at most every 80 ms (the stored message replaces it). */
export function streamTo(sessionId: string, seq: number, seat?: string) {
  let last = 0
  let pending: ReturnType<typeof setTimeout> | undefined
  let text = ''
  const send = () => {
    pending = undefined
    last = Date.now()
    void publish(`session:${sessionId}`, { type: 'delta', seq, text, ...(seat ? { seat } : {}) })
  }
  return (_delta: string, info: { text: string }) => {
    text = info.text
    if (pending) return
    pending = setTimeout(send, Math.max(0, 80 - (Date.now() - last)))
  }
}

// What happens after a session ends (the run's scheduler, closing the run) lives in schedule.ts.
export { afterSessionDone, closeIfFinished } from '@/lib/server/engine/schedule'

/** Step until the session needs a person, stalls, ends or waits (tests, the CLI, the seed). */
export async function runSession(sessionId: string, maxSteps = 1000): Promise<StepResult> {
  let loaded: Loaded | undefined
  let last: StepResult = { kind: 'idle', status: 'unknown' }
  for (let i = 0; i < maxSteps; i++) {
    last = await stepSession(sessionId, loaded ? { loaded } : {})
    if (last.kind === 'appended') {
      loaded = last.next
      if (last.done) {
        const end = last.next.plugin.protocol.next(last.next.ctx.state) as { reason?: string }
        return { kind: 'done', reason: end.reason ?? 'done' }
      }
      continue
    }
    loaded = undefined
    if (last.kind !== 'conflict') return last
  }
  return last
}
