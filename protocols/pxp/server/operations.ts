import { z } from 'zod'
import { pxp } from '@/protocols/pxp/core'
import { db, defineOperation, enforceRate, id, loadSession, notFound, parseSession, settings } from '@/lib/server/sdk'
import { pxpSessionConfig } from '@/protocols/pxp/server/agents'
import { answerRules, checkPrediction, drawPrediction, hiddenSeats, hintMatch } from '@/protocols/pxp/server/answer'

/**
 * The expert's answer checked while they type, with the rules `sessions.submit` applies: whether the
 * prediction is acceptable (a label of the task, SMILES RDKit parses) and why not, RDKit's drawing of
 * their own reactants, and Parley's own MATCH of the partner's latest prediction and this one (the
 * hint beside "Does the prediction match yours?", for exactly the text sent; `j` says which message it
 * was computed for, so the form can drop an answer meant for another turn). Only a person who fills a seat of the session may ask (404 otherwise); nothing is
 * written but the person's count of checks (PARLEY_CHECK_ANSWER_PER_MINUTE, 429 past it).
 */
export const checkPxpAnswer = defineOperation({
  name: 'pxp.check-answer',
  scope: 'work:submit',
  input: z.object({ sessionId: id, prediction: z.string().max(10_000).default('') }),
  async run(actor, { sessionId, prediction }) {
    const seat = await db.sessionSeat.findFirst({
      where: { sessionId, userId: actor.userId, session: { protocol: 'pxp' } },
      select: { seat: true },
    })
    if (!seat) throw notFound('Session')
    await enforceRate(actor, 'pxp.check-answer', settings(['PARLEY_CHECK_ANSWER_PER_MINUTE']).checkAnswerPerMinute)
    const ctx = parseSession({ protocol: pxp, sessionConfig: pxpSessionConfig }, await loadSession(sessionId))
    const { session } = ctx
    const next = pxp.next(ctx.state)
    const j = next.done ? null : next.j
    const template = ctx.extras.template
    const rules = answerRules(session.task, template)
    const checked = prediction.trim() ? await checkPrediction(rules, prediction) : null
    const y = checked?.ok ? checked.value : ''
    return {
      j,
      valid: checked ? checked.ok : null,
      error: checked && !checked.ok ? checked.error : null,
      svg: checked?.ok ? await drawPrediction(rules, y) : null,
      // No hint while the partner's answer is hidden from this person: it would reveal it bit by bit.
      match:
        j === null || hiddenSeats({ ...ctx, mySeats: [seat.seat] }).length
          ? null
          : await hintMatch({
              j,
              task: session.task,
              template,
              messages: session.messages,
              prediction: y,
            }),
    }
  },
})
