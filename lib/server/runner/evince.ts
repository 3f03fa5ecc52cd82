import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { critScore } from '@/lib/metrics/evince'
import {
  type CritMessage,
  type Debater,
  type EvinceAsk,
  type EvinceConfig,
  type EvinceMessage,
  EvinceMessageError,
  type EvinceState,
  evince,
  evinceConfig,
  finalDistribution,
  type TurnMessage,
} from '@/lib/protocols/evince'
import { replay } from '@/lib/protocols/types'
import {
  type ChatMessage,
  critPrompt,
  critReply,
  type DebateCase,
  debaterPrompt,
  reportPrompt,
  reportReply,
  turnReply,
} from '@/lib/tasks/evince-prompts'
import { parseJsonReply } from '@/lib/llm/client'
import { canonicalLabel } from '@/lib/metrics/evince'
import { db, sql } from '@/lib/server/db'
import { isUniqueViolation } from '@/lib/server/errors'
import { publishSession } from '@/lib/server/live'
import { pgJson, pgText, withoutNul } from '@/lib/server/pg-text'
import { markAwaiting, markDone, markStalled, runUntilStill, streamTo } from '@/lib/server/runner/session'
import { cachedConnection as connection, LlmError, recordedChat } from '@/lib/server/llm/runtime'

/**
 * One step of an EVINCE debate (the same shape as the PXP runner): replay M through the protocol,
 * ask whose turn it is, let that seat write exactly one message. A debater LLM answers a JSON top-k
 * distribution (re-asked with the error when invalid, bounded); a human debater leaves the session
 * `awaiting`; the moderator runs CRIT for one agent or writes the final report with its judge LLM.
 * M + C + the session status are one SQL statement keyed by (session, seq): a racing step gets
 * `conflict`. An LLM failure after retries stalls the session and appends nothing (resumable).
 */
const LlmRef = z.object({
  connectionId: z.string(),
  model: z.string().optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** A display name (the preset's or the model's), for the debate page. */
  name: z.string().optional(),
})
const DebaterSeat = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('llm'), generator: LlmRef }),
  z.object({ kind: z.literal('human'), userId: z.string() }),
])
export const EvinceSeats = z.object({
  A: DebaterSeat,
  B: DebaterSeat,
  moderator: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('llm'), judge: LlmRef }),
    /** No judge: CRIT and the report must be off. */
    z.object({ kind: z.literal('program') }),
  ]),
})
export type EvinceSeats = z.infer<typeof EvinceSeats>

export const DebateInstance = z.object({
  input: z.object({ symptoms: z.string() }).passthrough(),
  /** The ground-truth diagnosis ('' when unknown); never shown to the agents. */
  prediction: z.string().default(''),
  explanation: z.string().default(''),
})
export type DebateInstance = z.infer<typeof DebateInstance>

export type EvinceStepResult =
  | { kind: 'appended'; seq: number; tag: string }
  | { kind: 'done'; reason: string }
  | { kind: 'awaiting'; seat: Debater }
  | { kind: 'conflict'; seq: number }
  | { kind: 'stalled'; error: string }
  | { kind: 'paused' }

/** M rows → protocol messages: the payload column holds the whole message. */
export function evinceLog(rows: ReadonlyArray<{ seq: number; payload: unknown }>): EvinceMessage[] {
  return rows.map((r) => ({ ...(r.payload as object), seq: r.seq }) as EvinceMessage)
}

export async function loadDebate(sessionId: string) {
  const s = await db.protocolSession.findUnique({
    where: { id: sessionId },
    include: {
      messages: { orderBy: { seq: 'asc' }, select: { seq: true, payload: true } },
      experiment: { select: { status: true } },
    },
  })
  if (!s) throw new Error(`Session ${sessionId} does not exist.`)
  if (s.protocol !== 'evince') throw new Error(`Session ${sessionId} is not an EVINCE debate.`)
  const config = evinceConfig.parse(s.config)
  const seats = EvinceSeats.parse(s.seats)
  const instance = DebateInstance.parse(s.instance)
  const log = evinceLog(s.messages)
  const state = replay(evince, config, instance, log)
  return { session: s, config, seats, instance, log, state, ask: evince.next(state) }
}

/**
 * Ask a model for JSON of a shape; an unusable reply is re-asked with the error (3 attempts).
 * `check` adds the protocol's own rules (k, the label space).
 */
async function askJson<S extends z.ZodType>(
  ref: z.infer<typeof LlmRef>,
  messages: ChatMessage[],
  schema: S,
  ctx: { studyId: string; sessionId: string; seq: number; purpose: string; stream?: boolean; seat?: string },
  check?: (v: z.output<S>) => string | null,
): Promise<{ value: z.output<S>; callId: string | null; raw: string }> {
  const conn = await connection(ref.connectionId)
  const chat: ChatMessage[] = [...messages]
  let error = ''
  for (let attempt = 0; attempt < 3; attempt++) {
    const r = await recordedChat(
      conn,
      {
        model: ref.model ?? conn.defaultModel,
        ...(ref.temperature !== undefined ? { temperature: ref.temperature } : {}),
        response_format: { type: 'json_object' },
        messages: chat,
      },
      {
        purpose: ctx.purpose,
        studyId: ctx.studyId,
        sessionRef: ctx.sessionId,
        messageRef: String(ctx.seq),
        ...(ctx.stream ? { onToken: streamTo(ctx.sessionId, ctx.seq, ctx.seat ?? '') } : {}),
      },
    )
    const json = parseJsonReply(r.text)
    if (json.ok) {
      // Without U+0000 (PostgreSQL refuses it); the raw reply keeps it, escaped.
      const parsed = schema.safeParse(withoutNul(json.value))
      if (parsed.success) {
        const problem = check?.(parsed.data) ?? null
        if (!problem) return { value: parsed.data, callId: r.callIds.at(-1) ?? null, raw: r.text }
        error = problem
      } else error = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
    } else error = json.error
    chat.push(
      { role: 'assistant', content: r.text },
      {
        role: 'user',
        content: `Your answer cannot be used: ${error}. Answer again with JSON only, in the required shape.`,
      },
    )
  }
  throw new LlmError(
    'invalid_output',
    `The model did not answer in the required format after 3 attempts (${error}).`,
    [],
  )
}

const caseOf = (instance: DebateInstance): DebateCase => ({ symptoms: instance.input.symptoms })
const turns = (log: readonly EvinceMessage[]) => log.filter((m): m is TurnMessage => m.kind === 'turn')

/**
 * A debater's reply → its turn message: sorted by probability (stable), cut to the top k (a warning
 * is kept), checked against a closed label space.
 */
function turnFrom(config: EvinceConfig, reply: z.output<typeof turnReply>) {
  const sorted = reply.predictions
    .map((p, i) => ({ p, i }))
    .sort((a, b) => b.p.probability - a.p.probability || a.i - b.i)
  const kept = sorted.slice(0, config.k).map((x) => x.p)
  return {
    predictions: kept,
    arguments: reply.arguments,
    counterArguments: reply.counterArguments,
    warnings: sorted.length > config.k ? [`listed ${sorted.length} labels; kept the top ${config.k}`] : [],
  }
}

function labelSpaceProblem(config: EvinceConfig, labels: string[]): string | null {
  if (!config.labels.length) return null
  const allowed = new Set(config.labels.map((l) => canonicalLabel(l, config.aliases)))
  const bad = labels.filter((l) => !allowed.has(canonicalLabel(l, config.aliases)))
  return bad.length ? `these labels are not in the label space: ${bad.join(', ')}` : null
}

/** What the seat whose turn it is writes (LLM seats only); returns the message and its prompt. */
async function write(
  d: Awaited<ReturnType<typeof loadDebate>>,
  ask: EvinceAsk,
): Promise<{ message: EvinceMessage; context: unknown; callId: string | null; raw: string }> {
  const { session, config, seats, instance, log, state } = d
  const base = { studyId: session.studyId, sessionId: session.id, seq: ask.j }
  if (ask.kind === 'turn') {
    const seat = seats[ask.seat as Debater]
    if (seat.kind !== 'llm') throw new Error('unreachable: a human seat does not write here')
    const prompt = debaterPrompt({
      seat: ask.seat as Debater,
      round: ask.round,
      delta: ask.delta,
      config,
      case: caseOf(instance),
      turns: turns(log),
    })
    const r = await askJson(
      seat.generator,
      prompt,
      turnReply,
      { ...base, purpose: 'evince-debate', stream: true, seat: ask.seat },
      (v) =>
        labelSpaceProblem(
          config,
          v.predictions.map((p) => p.label),
        ),
    )
    const t = turnFrom(config, r.value)
    const message: EvinceMessage = {
      seq: ask.j,
      kind: 'turn',
      sender: ask.seat as Debater,
      round: ask.round,
      predictions: t.predictions,
      arguments: t.arguments,
      counterArguments: t.counterArguments,
    }
    return { message, context: { messages: prompt, warnings: t.warnings }, callId: r.callId, raw: r.raw }
  }
  if (seats.moderator.kind !== 'llm')
    throw new LlmError('client', 'This debate has no judge model, so CRIT and the report cannot run.', [])
  const judge = { ...seats.moderator.judge, temperature: seats.moderator.judge.temperature ?? 0 }
  if (ask.kind === 'crit') {
    const round = state.rounds.at(-1)
    const turn = round?.[ask.target]
    if (!turn) throw new Error('unreachable: CRIT before the turn')
    const rival = round?.[ask.target === 'A' ? 'B' : 'A']
    const prompt = critPrompt({ target: ask.target, case: caseOf(instance), turn, rival })
    const r = await askJson(judge, prompt, critReply, { ...base, purpose: 'evince-crit' })
    const message: CritMessage = {
      seq: ask.j,
      kind: 'crit',
      sender: 'moderator',
      round: ask.round,
      target: ask.target,
      score: critScore(r.value.reasons, r.value.rivals),
      reasons: r.value.reasons,
      rivals: r.value.rivals,
      comment: r.value.comment,
    }
    return { message, context: { messages: prompt }, callId: r.callId, raw: r.raw }
  }
  const final = finalDistribution(state)
  const prompt = reportPrompt({
    case: caseOf(instance),
    turns: turns(log),
    final: final?.crit ?? [],
  })
  const r = await askJson(judge, prompt, reportReply, { ...base, purpose: 'evince-report' })
  return {
    message: { seq: ask.j, kind: 'report', sender: 'moderator', ...r.value },
    context: { messages: prompt },
    callId: r.callId,
    raw: r.raw,
  }
}

/** The one-line summary kept in M's prediction column (lists and exports read it without the payload). */
function summary(m: EvinceMessage): string {
  if (m.kind === 'turn') return m.predictions[0]?.label ?? ''
  if (m.kind === 'crit') return m.score.toFixed(3)
  return m.conclusion.slice(0, 500)
}

/**
 * Append one message (M + C + the session's status in one statement). Validates it against the
 * protocol first, so nothing the rules refuse is ever stored. Throws a unique violation on a race.
 */
export async function appendDebateMessage(
  state: EvinceState,
  sessionId: string,
  message: EvinceMessage,
  extra: {
    context: unknown
    callId?: string | null
    authorUserId?: string | null
    raw?: string
    /** For the live notices, sent by the same statement when it commits. */
    experimentId: string | null
  },
) {
  const after = evince.apply(state, message)
  const receiver = message.sender === 'A' ? 'B' : message.sender === 'B' ? 'A' : 'A,B'
  const payload = pgJson({ ...message, ...(extra.raw ? { raw: extra.raw } : {}) })
  const ask = evince.next(after)
  const status = ask.done ? 'done' : 'running'
  const stopReason = ask.done ? ask.reason : null
  await sql().query(
    `WITH m AS (
       INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, tag, prediction, explanation, payload, "llmCallId", "authorUserId")
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8::jsonb, $9, $10)
       RETURNING "sessionId"
     ), c AS (
       INSERT INTO "ContextSnapshot" ("sessionId", seq, context)
       SELECT "sessionId", $3, $11::jsonb FROM m
     ), u AS (
       UPDATE "ProtocolSession" SET status = $12, "stopReason" = $13, "stallError" = NULL, "updatedAt" = now(),
         "doneAt" = CASE WHEN $12 = 'done' THEN now() ELSE NULL END
       WHERE id = (SELECT "sessionId" FROM m)
       RETURNING id
     )
     SELECT count(*) FROM u`,
    [
      randomUUID(),
      sessionId,
      message.seq,
      message.sender,
      receiver,
      message.kind,
      pgText(summary(message)),
      payload,
      extra.callId ?? null,
      extra.authorUserId ?? null,
      pgJson(extra.context ?? {}),
      status,
      stopReason,
    ],
  )
  // After the commit, on its own (a NOTIFY inside the append would serialise concurrent appends).
  void publishSession(
    sessionId,
    extra.experimentId,
    ask.done ? { type: 'status', status: 'done' } : { type: 'message', seq: message.seq },
  )
  return after
}

/** One step; with `onlyIfRunning` (the job queue) nothing happens unless the run is running. */
export async function stepEvinceSession(
  sessionId: string,
  opts: { onlyIfRunning?: boolean } = {},
): Promise<EvinceStepResult> {
  const d = await loadDebate(sessionId)
  const { session, seats, ask } = d
  if (opts.onlyIfRunning && session.experiment && session.experiment.status !== 'running') return { kind: 'paused' }
  if (ask.done) return markDone(session, ask.reason)
  if (ask.kind === 'turn' && seats[ask.seat as Debater].kind === 'human') {
    await markAwaiting(session)
    return { kind: 'awaiting', seat: ask.seat as Debater }
  }
  try {
    const w = await write(d, ask)
    await appendDebateMessage(d.state, sessionId, w.message, {
      context: w.context,
      callId: w.callId,
      raw: w.raw,
      experimentId: session.experimentId,
    })
    return { kind: 'appended', seq: ask.j, tag: w.message.kind }
  } catch (err) {
    if (isUniqueViolation(err)) return { kind: 'conflict', seq: ask.j }
    if (err instanceof LlmError || err instanceof EvinceMessageError)
      return markStalled(session, `${err instanceof LlmError ? err.kind : err.code}: ${err.message}`)
    throw err
  }
}

/** Step until the debate needs a person, stalls, or ends. */
export function runEvinceSession(sessionId: string, maxSteps = 200): Promise<EvinceStepResult> {
  return runUntilStill(() => stepEvinceSession(sessionId), maxSteps, { kind: 'awaiting', seat: 'A' })
}
