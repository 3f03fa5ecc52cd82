import { z } from 'zod'
import { ProtocolError } from '@/lib/protocols/types'
import {
  type Actor,
  AppError,
  badRequest,
  db,
  defineOperation,
  enforceRate,
  id,
  llmTools,
  loadSession,
  mayTakePart,
  notFound,
  parseSession,
} from '@/lib/server/sdk'
import { ACTION_TYPES, ACTIONS, MAX_ARG, type RehacMessage, rehac } from '@/protocols/rehac/core/protocol'
import { parseStepReply, qaStep, stepRequest } from '@/protocols/rehac/server/agents'
import { refusedStep, sessionConfig, sqlEnvOf } from '@/protocols/rehac/server/session'

/**
 * The annotator's helpers on their step page (issue 24), each for the step the person is writing:
 * - `rehac.preview-step` ("Run"): the Observation the proposed action would produce, before the step is
 *   sent. Nothing is written: QA replays the corpus state from the log and answers Search / Lookup as the
 *   environment would; Finish / submit only say that they end the episode (never the gold answer or a
 *   reward); a SQL statement runs read-only as the task set's reader, with its timeout and row cap.
 * - `rehac.suggest-step` ("Show a suggestion"): the session's agent's own proposal for this step (its
 *   ReAct prompt, decoding and stop sequence), asked on demand and logged as an LLM call of the session.
 * Only the person in the session's human seat, a member of its study who takes part, may ask, while the session awaits their step `seq`
 * (404 for anyone else, 409 for a step no longer open); both are rate-limited per person.
 */

/** Previews per person and minute (each SQL one is a statement on the database). */
export const PREVIEWS_PER_MINUTE = 60
/** Suggestions per person and minute (each is a model call). */
export const SUGGESTIONS_PER_MINUTE = 12

const StepRef = z.object({ sessionId: id, seq: z.coerce.number().int().min(1).max(1_000_000) })

/** The session the actor writes step `seq` of, in its human seat; refused otherwise. */
async function humanStep(actor: Actor, sessionId: string, seq: number) {
  const seat = await db.sessionSeat.findFirst({
    where: {
      sessionId,
      seat: 'human',
      userId: actor.userId,
      session: { protocol: 'rehac' },
      OR: [{ leaseUntil: null }, { leaseUntil: { gt: new Date() } }],
    },
    select: { session: { select: { study: { select: { members: { where: { userId: actor.userId } } } } } } },
  })
  // Seated, and still a member of the session's study whose role takes part (as sending a turn needs).
  const member = seat?.session.study.members[0]
  if (!seat || !member) throw notFound('Session')
  if (!mayTakePart(actor.role, member.role))
    throw new AppError(403, 'Your role in this study does not take part in its sessions.')
  const ctx = parseSession({ protocol: rehac, sessionConfig }, await loadSession(sessionId))
  const ask = rehac.next(ctx.state)
  if (ctx.session.status !== 'awaiting' || ask.done || ask.kind !== 'step' || ask.seat !== 'human' || ask.j !== seq)
    throw new AppError(409, 'This step is no longer yours to write: reload the page.')
  return { ctx, ask }
}

export type RehacPreview = {
  /** The message the preview is for. */
  j: number
  /** What the environment would answer (or what Finish / submit would do). */
  observation: string
  /** The action ends the episode by itself (Finish, submit). */
  ends: boolean
  /** False when the environment would answer with an error (an invalid QA action, a refused statement). */
  ok: boolean
}

export const previewRehacStep = defineOperation({
  name: 'rehac.preview-step',
  scope: 'work:submit',
  input: StepRef.extend({
    action: z.object({
      type: z.enum(ACTION_TYPES, { error: 'Choose an action.' }),
      arg: z.string({ error: 'The argument must be text.' }).max(MAX_ARG, 'The argument is too long.').default(''),
    }),
  }),
  async run(actor, { sessionId, seq, action }): Promise<RehacPreview> {
    const { ctx, ask } = await humanStep(actor, sessionId, seq)
    await enforceRate(actor, 'rehac.preview-step', PREVIEWS_PER_MINUTE)
    const sql = ctx.instance.kind === 'sql'
    const a = { type: action.type, arg: action.arg.trim() }
    // The protocol's own rules first (the action fits the task, it has its argument), as sending applies them.
    const step = { seq: ask.j, sender: 'human', kind: 'step', t: ask.t, thought: sql ? null : 'preview', action: a }
    try {
      rehac.apply(ctx.state, { ...step, suggestion: null, ms: null } as RehacMessage)
    } catch (err) {
      if (err instanceof ProtocolError) throw refusedStep(err)
      throw err
    }
    const j = ask.j
    if (a.type === 'finish')
      return {
        j,
        observation: `Finish[${a.arg}] ends the episode with this answer. Its reward is shown once the step is sent.`,
        ends: true,
        ok: true,
      }
    if (a.type === 'submit')
      return {
        j,
        observation: 'submit ends the episode: the last statement run is the answer. Its reward is shown once sent.',
        ends: true,
        ok: true,
      }
    if (a.type === 'sql') {
      const { env, slug } = await sqlEnvOf(ctx.session.instance)
      // The row cap of the step's own run (sqlReward's), so the preview's text is the Observation the step gets.
      const run = await env.runSqlStatement(slug, a.arg, { maxRows: env.SQL_LIMITS.rewardMaxRows })
      return { j, observation: env.sqlObservation(run), ends: false, ok: run.ok }
    }
    const { step: answered } = qaStep(ctx, a)
    return { j, observation: answered.observation, ends: false, ok: answered.action.kind !== 'invalid' }
  },
})

export type RehacSuggestion = {
  j: number
  /** The agent's Thought (null for SQL, or when it wrote none). */
  thought: string | null
  /** Its action when it reads as one of the task's actions; null otherwise (see `raw`). */
  action: { type: string; arg: string } | null
  /** The model's reply as written (shown as text). */
  raw: string
}

export const suggestRehacStep = defineOperation({
  name: 'rehac.suggest-step',
  scope: 'work:submit',
  input: StepRef,
  async run(actor, { sessionId, seq }): Promise<RehacSuggestion> {
    const { ctx, ask } = await humanStep(actor, sessionId, seq)
    const agent = ctx.seats.agent
    if (agent?.kind !== 'llm') throw badRequest('The agent of this session is not a model: it has no suggestion.')
    await enforceRate(actor, 'rehac.suggest-step', SUGGESTIONS_PER_MINUTE)
    const { request } = stepRequest(ctx.state, ask.t, false)
    const llm = llmTools({
      studyId: ctx.session.studyId,
      sessionId,
      seq: ask.j,
      clock: { llmMs: 0 },
      signal: AbortSignal.timeout(60_000),
    })
    let text: string
    try {
      text = (await llm.chat(agent.model, request, { purpose: 'rehac-suggestion' })).text
    } catch (err) {
      const why = err instanceof Error ? err.message.slice(0, 300) : 'no answer'
      throw new AppError(422, `The agent could not make a suggestion (${why}). Try again, or write the step yourself.`)
    }
    const kind = ctx.instance.kind
    const parsed = parseStepReply(text, kind, ask.t)
    const fits = (ACTIONS[kind] as readonly string[]).includes(parsed.action.type)
    return {
      j: ask.j,
      thought: kind === 'sql' ? null : parsed.thought,
      action: fits ? parsed.action : null,
      raw: text.slice(0, 4_000),
    }
  },
})
