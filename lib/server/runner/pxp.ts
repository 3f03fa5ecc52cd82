import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { replay } from '@/lib/protocols/types'
import { type Answer, agentTagAsync, pxp, type PxpMessage, type PxpSeat, otherSeat } from '@/lib/protocols/pxp'
import { getRDKit, reactantsMatch } from '@/lib/tasks/chem'
import {
  assemblePrompt,
  type ChatTurn,
  contextTurn,
  EXPLANATION_KEY,
  type PxpTaskKind,
  queryTurn,
} from '@/lib/tasks/pxp-prompts'
import {
  agreeQuestion,
  genericContextTurn,
  genericPrompt,
  genericQuery,
  matchGeneric,
  TaskTemplate,
} from '@/lib/tasks/generic'
import { labelsMatch, parseReply } from '@/lib/tasks/reply'
import { db, sql } from '@/lib/server/db'
import { isUniqueViolation } from '@/lib/server/errors'
import { publishSession } from '@/lib/server/live'
import { pgJson, pgText, withoutNul } from '@/lib/server/pg-text'
import { markAwaiting, markDone, markStalled, runUntilStill, streamTo } from '@/lib/server/runner/session'
import { cachedConnection as connection, LlmError, recordedChat } from '@/lib/server/llm/runtime'

/**
 * One step of a PXP session (DESIGN.md "one runner"): replay M through the protocol, ask whose
 * turn it is, and let that seat write exactly one message. A human seat writes nothing here (the
 * session waits for them); an LLM seat asks its model; a proxy seat answers from the ground truth.
 * MATCH is the task's; AGREE is a checker LLM at temperature 0. The append is one transaction of
 * M and C rows; a concurrent step for the same message loses cleanly on the (session, seq) key.
 */
const LlmRef = z.object({ connectionId: z.string(), model: z.string().optional() })
/** An LLM seat's generator; the X-ray goes only to models that accept images (`vision`). */
const Generator = LlmRef.extend({ temperature: z.number().optional(), vision: z.boolean().default(true) })
export const PxpSeats = z.object({
  m: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('llm'),
      generator: Generator,
      checker: LlmRef,
    }),
    z.object({ kind: z.literal('human'), userId: z.string() }),
  ]),
  h: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('proxy'), checker: LlmRef }),
    z.object({ kind: z.literal('human'), userId: z.string() }),
    z.object({
      kind: z.literal('llm'),
      generator: Generator,
      checker: LlmRef,
    }),
  ]),
})
export type PxpSeats = z.infer<typeof PxpSeats>

export const PxpInstance = z.object({
  input: z.record(z.string(), z.unknown()),
  prediction: z.string(),
  explanation: z.string(),
  /** For RAD: the image as a data: URL, or looked up in the dataset's assets by `input.image`. */
  imageUrl: z.string().optional(),
  datasetId: z.string().optional(),
})
export type PxpInstance = z.infer<typeof PxpInstance>

export type StepResult =
  /**
   * `next`: the session as it now stands (its log with this message appended, the run's status as
   * of the append), so the same job's next step need not read it again. Valid because the log is
   * append-only and keyed by (session, seq): if anyone else wrote the next message, that step's
   * append conflicts and the job ends.
   */
  | { kind: 'appended'; seq: number; tag: string; next?: LoadedSession }
  | { kind: 'done'; reason: string }
  | { kind: 'awaiting'; seat: PxpSeat }
  | { kind: 'conflict'; seq: number }
  | { kind: 'stalled'; error: string }
  /** The session's experiment is not running (paused or cancelled): nothing was done. */
  | { kind: 'paused' }

/** MATCH for a task's predictions. */
async function matcher(task: PxpTaskKind, template?: TaskTemplate) {
  if (template) return matchGeneric(template.match)
  if (task === 'drug') {
    const rd = await getRDKit()
    return (a: string, b: string) => reactantsMatch(rd, a, b)
  }
  return labelsMatch
}

/** AGREE through a checker LLM (temperature 0): identical explanations agree without a call. */
function checker(task: PxpTaskKind, ref: z.infer<typeof LlmRef>, ctx: StepCtx, template?: TaskTemplate) {
  const subject = task === 'rad' ? 'explanations of an X-ray' : 'retrosynthesis pathways'
  return async (a: string, b: string) => {
    if (a.trim() === b.trim()) return true
    const conn = await connection(ref.connectionId)
    const t0 = performance.now()
    const messages = template
      ? [
          { role: 'system' as const, content: 'You are an expert judge. Respond only with Yes or No.' },
          { role: 'user' as const, content: agreeQuestion(template, a, b) },
        ]
      : [
          {
            role: 'system' as const,
            content: `You are an expert. Judge whether two ${subject} are consistent. Respond only with Yes or No.`,
          },
          { role: 'user' as const, content: `Given A: ${a}\nand B: ${b}\nare A and B consistent?` },
        ]
    const r = await recordedChat(
      conn,
      { model: ref.model ?? conn.defaultModel, temperature: 0, seed: 42, messages },
      { purpose: 'pxp-agree', studyId: ctx.studyId, sessionRef: ctx.sessionId, messageRef: String(ctx.seq) },
    ).finally(() => {
      ctx.llmMs += performance.now() - t0
    })
    return /\byes\b/i.test(r.text)
  }
}

/** Ask the generator for (y, e); an unparsable reply is re-asked with the parse error (bounded). */
async function generate(
  task: PxpTaskKind,
  gen: z.infer<typeof Generator>,
  prompt: ChatTurn[],
  ctx: StepCtx,
  onToken?: (delta: string, info: { attempt: number; text: string }) => void,
  template?: TaskTemplate,
): Promise<{ answer: Answer; callId: string | null; raw: string }> {
  const conn = await connection(gen.connectionId)
  const messages = [...prompt] as Array<{ role: 'system' | 'user' | 'assistant'; content: unknown }>
  for (let ask = 0; ask < 3; ask++) {
    const t0 = performance.now()
    const r = await recordedChat(
      conn,
      {
        model: gen.model ?? conn.defaultModel,
        ...(gen.temperature !== undefined ? { temperature: gen.temperature } : {}),
        messages: messages as never,
      },
      {
        purpose: 'pxp-generate',
        studyId: ctx.studyId,
        sessionRef: ctx.sessionId,
        messageRef: String(ctx.seq),
        ...(onToken ? { onToken } : {}),
      },
    ).finally(() => {
      ctx.llmMs += performance.now() - t0
    })
    // The answer goes on without U+0000 (PostgreSQL refuses it); the raw reply keeps it, escaped.
    const parsed = parseReply(
      withoutNul(r.text),
      template
        ? { prediction: template.predictionField, explanation: [template.explanationField] }
        : { explanation: [EXPLANATION_KEY[task], 'Explanation'] },
    )
    if (parsed.ok)
      return {
        answer: { y: parsed.value.prediction, e: parsed.value.explanation },
        callId: r.callIds.at(-1) ?? null,
        raw: r.text,
      }
    messages.push(
      { role: 'assistant', content: r.text },
      { role: 'user', content: `${parsed.error} Answer again in the required format.` },
    )
  }
  throw new LlmError('invalid_output', 'The model did not answer in the required format after 3 attempts.', [])
}

/**
 * The paper does not reset the generator between sessions: with carry-over, the machine's context
 * starts with the dialogues of the earlier sessions of its repetition, in their recorded order.
 */
async function carriedOver(session: {
  experimentId: string | null
  repetition: number
  position: number
  experiment: { carryOver: boolean } | null
}): Promise<PxpMessage[]> {
  if (!session.experimentId || !session.experiment?.carryOver) return []
  const earlier = await db.protocolMessage.findMany({
    where: {
      session: {
        experimentId: session.experimentId,
        repetition: session.repetition,
        position: { lt: session.position },
      },
    },
    orderBy: [{ session: { position: 'asc' } }, { seq: 'asc' }],
  })
  return messageLog(earlier)
}

/** M rows as the protocol's messages (the fold `replay` runs over). */
export function messageLog(
  rows: ReadonlyArray<{
    seq: number
    sender: string
    tag: string | null
    prediction: string | null
    explanation: string | null
  }>,
): PxpMessage[] {
  return rows.map((m) => ({
    seq: m.seq,
    sender: m.sender as PxpSeat,
    tag: m.tag as PxpMessage['tag'],
    prediction: m.prediction ?? '',
    explanation: m.explanation ?? '',
  }))
}

/** The instance's image as a data: URL, from the dataset's stored assets. */
async function imageOf(instance: PxpInstance): Promise<string | undefined> {
  const name = instance.input.image
  if (typeof name !== 'string' || !instance.datasetId) return undefined
  const asset = await db.asset.findUnique({ where: { datasetId_name: { datasetId: instance.datasetId, name } } })
  return asset ? `data:${asset.mime};base64,${Buffer.from(asset.bytes).toString('base64')}` : undefined
}

/** Per-step context: where LLM calls are recorded, and the time spent waiting for them. */
interface StepCtx {
  studyId: string
  sessionId: string
  seq: number
  llmMs: number
}

/** Timing of every step (the runner's own time is totalMs − llmMs); used by `npm run bench:pxp`. */
export type StepTiming = { kind: StepResult['kind']; totalMs: number; llmMs: number }
let stepObserver: ((t: StepTiming) => void) | undefined
export function observeSteps(fn: ((t: StepTiming) => void) | undefined) {
  stepObserver = fn
}

/**
 * A session's stored config: the protocol's (n, k) and, for a generic task, the template snapshot
 * taken when the experiment was created.
 */
export function sessionConfig(raw: unknown, task: string) {
  const { template, ...protocol } = (raw ?? {}) as { template?: unknown }
  return {
    config: pxp.config.parse(protocol),
    template: task === 'generic' ? TaskTemplate.parse(template) : undefined,
  }
}

/**
 * One step. With `onlyIfRunning` (the job queue), a session whose experiment is paused or cancelled
 * is left alone (`paused`): the status is read in the same statement as the session, so a pause
 * holds within one message at no extra round trip.
 */
export async function stepPxpSession(sessionId: string, opts: StepOptions = {}): Promise<StepResult> {
  if (!stepObserver) return step(sessionId, { llmMs: 0 }, opts)
  const t0 = performance.now()
  const clock = { llmMs: 0 }
  const r = await step(sessionId, clock, opts)
  stepObserver({ kind: r.kind, totalMs: performance.now() - t0, llmMs: clock.llmMs })
  return r
}

/** The session row, its experiment's carry-over flag and its messages: one plain statement (every step runs it). */
async function loadSession(sessionId: string) {
  const { rows } = await sql().query<{
    id: string
    studyId: string
    experimentId: string | null
    task: string
    config: unknown
    seats: unknown
    instance: unknown
    repetition: number
    position: number
    status: string
    doneAt: Date | null
    carryOver: boolean | null
    experimentStatus: string | null
    messages: Array<{
      seq: number
      sender: string
      tag: string | null
      prediction: string | null
      explanation: string | null
    }>
  }>(
    `SELECT s.id, s."studyId", s."experimentId", s.task, s.config, s.seats, s.instance, s.repetition, s.position,
            s.status, s."doneAt", e."carryOver", e.status AS "experimentStatus",
            COALESCE((SELECT json_agg(json_build_object('seq', m.seq, 'sender', m.sender, 'tag', m.tag,
                        'prediction', m.prediction, 'explanation', m.explanation) ORDER BY m.seq)
                      FROM "ProtocolMessage" m WHERE m."sessionId" = s.id), '[]') AS messages
     FROM "ProtocolSession" s LEFT JOIN "Experiment" e ON e.id = s."experimentId"
     WHERE s.id = $1`,
    [sessionId],
  )
  const row = rows[0]
  if (!row) throw new Error(`Session ${sessionId} does not exist.`)
  return { ...row, experiment: row.carryOver === null ? null : { carryOver: row.carryOver } }
}

export interface StepOptions {
  onlyIfRunning?: boolean
  /** The session as the previous step of this job left it (see StepResult `next`). */
  loaded?: LoadedSession
}

export type LoadedSession = Awaited<ReturnType<typeof loadSession>>

async function step(sessionId: string, clock: { llmMs: number }, opts: StepOptions): Promise<StepResult> {
  const session = opts.loaded?.id === sessionId ? opts.loaded : await loadSession(sessionId)
  if (opts.onlyIfRunning && session.experimentId && session.experimentStatus !== 'running') return { kind: 'paused' }
  const { config, template } = sessionConfig(session.config, session.task)
  const seats = PxpSeats.parse(session.seats)
  const instance = PxpInstance.parse(session.instance)
  const task = session.task as PxpTaskKind
  const log = messageLog(session.messages)
  const state = replay(pxp, config, instance, log)
  const ask = pxp.next(state)
  if (ask.done) return markDone(session, ask.reason)
  const seat = seats[ask.seat]
  if (seat.kind === 'human') {
    await markAwaiting(session)
    return { kind: 'awaiting', seat: ask.seat }
  }
  const j = ask.j
  const byJ = (n: number) => log.find((m) => m.seq === n)
  const asAnswer = (m?: PxpMessage) => (m ? { y: m.prediction, e: m.explanation } : undefined)
  const ctx: StepCtx = {
    studyId: session.studyId,
    sessionId,
    seq: j,
    get llmMs() {
      return clock.llmMs
    },
    set llmMs(v: number) {
      clock.llmMs = v
    },
  }
  try {
    let answer: Answer
    let callId: string | null = null
    let raw: string | null = null
    let context: unknown = null
    if (seat.kind === 'proxy') {
      answer = { y: instance.prediction, e: instance.explanation }
    } else {
      // The prompt is written from the speaking seat's side: its own earlier messages are the
      // assistant's turns, the partner's are the user's (an LLM tester sees the dialogue mirrored).
      const turns = [...(await carriedOver(session)), ...log].map((m) => {
        const msg = {
          sender: m.sender === ask.seat ? ('m' as const) : ('h' as const),
          tag: m.tag,
          y: m.prediction,
          e: m.explanation,
        }
        return template ? genericContextTurn(template, msg) : contextTurn(task, msg)
      })
      const imageUrl = seat.generator.vision ? (instance.imageUrl ?? (await imageOf(instance))) : undefined
      const prompt = template
        ? genericPrompt(template, turns, genericQuery(template, instance.input))
        : assemblePrompt(
            task,
            turns,
            queryTurn(task, { imageUrl, smiles: instance.input.smiles as string | undefined }),
          )
      context = prompt
      // A person on the other seat watches the answer arrive token by token.
      const watched = seats[otherSeat(ask.seat)].kind === 'human'
      const g = await generate(
        task,
        seat.generator,
        prompt,
        ctx,
        watched ? streamTo(sessionId, j) : undefined,
        template,
      )
      answer = g.answer
      callId = g.callId
      raw = g.raw
    }
    const tagged = await agentTagAsync({
      j,
      k: config.k,
      own: answer,
      ownPrev: asAnswer(byJ(j - 2)),
      partnerPrev: asAnswer(byJ(j - 1)),
      match: await matcher(task, template),
      agree: checker(task, seat.checker, ctx, template),
    })
    const payload = pgJson({
      category: tagged.category,
      changed: tagged.changed,
      ...(raw !== null ? { raw } : {}),
    })
    // M, C and the session's status in one statement: atomic, one round trip. The live notice is
    // sent after it, on its own: a NOTIFY inside the append would serialise every committing append
    // behind PostgreSQL's notify lock (and so their WAL flushes), which under load cost more than
    // the extra statement.
    const appended = await sql().query<{ experimentStatus: string | null }>(
      `WITH m AS (
         INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, tag, prediction, explanation, payload, "llmCallId")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10)
         RETURNING "sessionId"
       ), c AS (
         INSERT INTO "ContextSnapshot" ("sessionId", seq, context)
         SELECT "sessionId", $3, $11::jsonb FROM m
       ), u AS (
         UPDATE "ProtocolSession" SET status = 'running', "stallError" = NULL, "updatedAt" = now()
         WHERE id = (SELECT "sessionId" FROM m)
         RETURNING id
       )
       SELECT (SELECT count(*) FROM u) AS updated, (SELECT status FROM "Experiment" WHERE id = $12) AS "experimentStatus"`,
      [
        randomUUID(),
        sessionId,
        j,
        ask.seat,
        otherSeat(ask.seat),
        tagged.tag,
        pgText(answer.y),
        pgText(answer.e),
        payload,
        callId,
        pgJson(context ?? { proxy: 'ground truth' }),
        session.experimentId,
      ],
    )
    void publishSession(sessionId, session.experimentId, { type: 'message', seq: j })
    const next: LoadedSession = {
      ...session,
      status: 'running',
      experimentStatus: appended.rows[0]?.experimentStatus ?? null,
      messages: [
        ...session.messages,
        { seq: j, sender: ask.seat, tag: tagged.tag, prediction: answer.y, explanation: answer.e },
      ],
    }
    return { kind: 'appended', seq: j, tag: tagged.tag, next }
  } catch (err) {
    if (isUniqueViolation(err)) return { kind: 'conflict', seq: j }
    if (err instanceof LlmError) return markStalled(session, `${err.kind}: ${err.message}`)
    throw err
  }
}

/** Step until the session needs a person, stalls, or ends. */
export function runPxpSession(sessionId: string, maxSteps = 100): Promise<StepResult> {
  return runUntilStill(() => stepPxpSession(sessionId), maxSteps, { kind: 'awaiting', seat: 'h' })
}
