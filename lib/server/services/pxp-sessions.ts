import { z } from 'zod'
import { allowedTags, category, deriveTag, isTagAllowed, pxp, pxpTag } from '@/lib/protocols/pxp'
import { replay } from '@/lib/protocols/types'
import type { Actor } from '@/lib/server/actor'
import { hasScope } from '@/lib/server/auth/roles'
import { db } from '@/lib/server/db'
import { badRequest, conflict, isUniqueViolation, notFound } from '@/lib/server/errors'
import { publishSession } from '@/lib/server/live'
import { defineOperation } from '@/lib/server/operation'
import { boolParam, pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { messageLog, PxpInstance, sessionConfig } from '@/lib/server/runner/pxp'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { id, studiesWhere } from '@/lib/server/services/studies'

/**
 * Sessions an actor may open: those assigned to them; with work:read-study also those of the
 * studies they may read (an expert or annotator study role reads no one else's).
 */
export function visibleSessions(actor: Actor) {
  const own = { assigneeId: actor.userId }
  return hasScope(actor.role, 'work:read-study') ? { OR: [own, { study: studiesWhere(actor, 'read') }] } : own
}

export const listMySessions = defineOperation({
  name: 'pxp-sessions.list-mine',
  scope: 'work:read-own',
  input: z.object({ ...pageInput, status: z.enum(['running', 'awaiting', 'stalled', 'done']).optional() }),
  async run(actor, { page, pageSize, status }) {
    const where = { assigneeId: actor.userId, ...(status ? { status } : {}) }
    const [items, total] = await Promise.all([
      db.protocolSession.findMany({
        where,
        select: {
          id: true,
          protocol: true,
          status: true,
          task: true,
          repetition: true,
          position: true,
          updatedAt: true,
          study: { select: { name: true } },
          experiment: { select: { name: true } },
          _count: { select: { messages: true } },
        },
        // Sessions waiting for this person first, then the rest by age.
        orderBy: [{ status: 'asc' }, { createdAt: 'asc' }],
        ...skipTake(page, pageSize),
      }),
      db.protocolSession.count({ where }),
    ])
    return pageOf(items, total, page, pageSize)
  },
})

export const getPxpSession = defineOperation({
  name: 'pxp-sessions.get',
  scope: 'work:read-own',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const s = await db.protocolSession.findFirst({
      where: { id: sessionId, ...visibleSessions(actor) },
      include: {
        messages: { orderBy: { seq: 'asc' } },
        study: { select: { id: true, name: true, guidelines: true } },
        experiment: { select: { id: true, name: true } },
      },
    })
    if (!s) throw notFound('Session')
    const config = sessionConfig(s.config, s.task).config
    const instance = PxpInstance.parse(s.instance)
    const state = replay(pxp, config, instance, messageLog(s.messages))
    const ask = pxp.next(state)
    const mine = s.assigneeId === actor.userId
    const seat = humanSeat(s.seats, actor.userId)
    // The ground truth is never shown to the person answering (it is what they are compared with).
    const { prediction: _y, explanation: _e, ...shown } = instance
    return {
      id: s.id,
      status: s.status,
      stopReason: s.stopReason,
      stallError: s.stallError,
      task: s.task,
      config,
      study: s.study,
      experiment: s.experiment,
      instance: mine ? shown : instance,
      messages: s.messages.map((m) => ({
        seq: m.seq,
        sender: m.sender,
        tag: m.tag,
        prediction: m.prediction,
        explanation: m.explanation,
        createdAt: m.createdAt,
      })),
      ask: ask.done ? null : { seat: ask.seat, j: ask.j, allowedTags: ask.allowedTags ?? [] },
      done: ask.done ? ask.reason : null,
      /** The seat this person fills (h as the tester, m when experts play the machine). */
      seat,
      yourTurn: mine && !ask.done && ask.seat === seat,
    }
  },
})

/** The seat a person fills in a session: m when the machine seat is theirs, else h. */
export function humanSeat(seats: unknown, userId: string): 'h' | 'm' {
  const m = (seats as { m?: { kind?: string; userId?: string } } | null)?.m
  return m?.kind === 'human' && m.userId === userId ? 'm' : 'h'
}

export const SubmitHumanMessage = z.object({
  sessionId: id,
  /** The message number the person answered (guards against answering twice or out of turn). */
  seq: z.coerce.number().int().min(1),
  /** "Does the prediction match yours?" (MATCH of the partner's answer and your previous one); not asked at j = 1. */
  matchPrev: boolParam.optional(),
  /** "Does the explanation agree with yours?"; not asked at j = 1. */
  agreePrev: boolParam.optional(),
  prediction: z.string({ error: 'Write your prediction.' }).trim().min(1, 'Write your prediction.').max(10_000),
  explanation: z.string({ error: 'Write your explanation.' }).trim().min(1, 'Write your explanation.').max(50_000),
  /** Another allowed tag than the derived one, if the person chooses. */
  tag: pxpTag.optional(),
})

/**
 * The tag Procedure 2 derives from a person's answers: the category from their two judgements,
 * Changed from whether their new answer differs from their previous one (never at j = 2).
 */
export function derivedHumanTag(input: {
  j: number
  k: number
  matchPrev: boolean
  agreePrev: boolean
  own: { y: string; e: string }
  ownPrev?: { y: string; e: string }
}) {
  if (input.j === 1) return 'INIT' as const
  const cat = category(input.matchPrev, input.agreePrev)
  const prev = input.j === 2 || !input.ownPrev ? input.own : input.ownPrev
  const changed = prev.y.trim() !== input.own.y.trim() || prev.e.trim() !== input.own.e.trim()
  return deriveTag({ j: input.j, k: input.k, category: cat, changed })
}

export const submitHumanMessage = defineOperation({
  name: 'pxp-sessions.submit',
  scope: 'work:submit',
  input: SubmitHumanMessage,
  async run(actor, input) {
    const s = await db.protocolSession.findFirst({
      where: { id: input.sessionId, assigneeId: actor.userId },
      include: { messages: { orderBy: { seq: 'asc' } } },
    })
    if (!s) throw notFound('Session')
    const config = sessionConfig(s.config, s.task).config
    const log = messageLog(s.messages)
    const state = replay(pxp, config, PxpInstance.parse(s.instance), log)
    const ask = pxp.next(state)
    if (ask.done) throw conflict('This session is over; nothing more can be added.')
    const seat = humanSeat(s.seats, actor.userId)
    if (ask.j !== input.seq || ask.seat !== seat) {
      throw conflict(
        input.seq < ask.j ? 'This message was already answered (in another tab?).' : 'It is not your turn yet.',
      )
    }
    if (ask.j > 1 && (input.matchPrev === undefined || input.agreePrev === undefined)) {
      const fieldErrors: Record<string, string[]> = {}
      if (input.matchPrev === undefined) fieldErrors.matchPrev = ['Answer: does the prediction match yours?']
      if (input.agreePrev === undefined) fieldErrors.agreePrev = ['Answer: does the explanation agree with yours?']
      throw badRequest('Answer both questions about your partner’s message.', fieldErrors)
    }
    const ownPrev = log.find((m) => m.seq === ask.j - 2)
    const derived = derivedHumanTag({
      j: ask.j,
      k: config.k,
      matchPrev: input.matchPrev ?? true,
      agreePrev: input.agreePrev ?? true,
      own: { y: input.prediction, e: input.explanation },
      ownPrev: ownPrev ? { y: ownPrev.prediction, e: ownPrev.explanation } : undefined,
    })
    const tag = input.tag ?? derived
    if (!isTagAllowed(tag, ask.j, config.k)) {
      throw badRequest(
        tag === 'REJECT'
          ? `REJECT is allowed only after message ${config.k}; this is message ${ask.j}.`
          : `${tag} is not allowed at message ${ask.j}. Allowed: ${allowedTags(ask.j, config.k, derived).join(', ')}.`,
        { tag: ['Choose an allowed tag.'] },
      )
    }
    try {
      await db.$transaction(async (tx) => {
        await tx.protocolMessage.create({
          data: {
            sessionId: s.id,
            seq: ask.j,
            sender: seat,
            receiver: seat === 'h' ? 'm' : 'h',
            tag,
            prediction: input.prediction,
            explanation: input.explanation,
            authorUserId: actor.userId,
            payload: {
              matchPrev: input.matchPrev,
              agreePrev: input.agreePrev,
              derivedTag: derived,
              chosen: tag !== derived,
            },
          },
        })
        await tx.contextSnapshot.create({ data: { sessionId: s.id, seq: ask.j, context: { human: actor.email } } })
        await tx.protocolSession.update({ where: { id: s.id }, data: { status: 'running' } })
        await writeAudit(tx, {
          actor: actorRef(actor),
          action: 'pxp.human-message',
          resourceType: 'session',
          resourceId: s.id,
          studyId: s.studyId,
          after: { seq: ask.j, tag, derived },
        })
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('This message was already answered (in another tab?).')
      throw err
    }
    await publishSession(s.id, s.experimentId, { type: 'message', seq: ask.j })
    return { sessionId: s.id, seq: ask.j, tag, derived }
  },
})
