import { z } from 'zod'
import { allowedTags, category, deriveTag, isTagAllowed, type PxpMessage, type pxp, pxpTag } from '@/protocols/pxp/core'
import { badRequest, boolParam, type HumanContext, type Produced } from '@/lib/server/sdk'
import type { PxpExtras } from '@/protocols/pxp/server/agents'
import { answerRules, checkPrediction, computedMatch } from '@/protocols/pxp/server/answer'

/**
 * A person in a PXP seat (the tester, or the machine when experts play it). They answer the two
 * questions Procedure 2 asks ("Does the prediction match yours?", "Does the explanation agree with
 * yours?"; not at message 1), give their own prediction and explanation, and may choose another
 * allowed tag than the one derived from their answers.
 */
export const PxpTurnInput = z.object({
  /** "Does the prediction match yours?" (MATCH of the partner's answer and your previous one); not asked at j = 1. */
  matchPrev: boolParam.optional(),
  /** "Does the explanation agree with yours?"; not asked at j = 1. */
  agreePrev: boolParam.optional(),
  prediction: z.string({ error: 'Write your prediction.' }).trim().min(1, 'Write your prediction.').max(10_000),
  explanation: z.string({ error: 'Write your explanation.' }).trim().min(1, 'Write your explanation.').max(50_000),
  /** Another allowed tag than the derived one, if the person chooses. */
  tag: pxpTag.optional(),
})
export type PxpTurnInput = z.output<typeof PxpTurnInput>

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

export async function pxpTurnMessage(
  ctx: HumanContext<typeof pxp, PxpExtras>,
  input: PxpTurnInput,
): Promise<Produced<PxpMessage>> {
  const j = ctx.ask.j
  const k = ctx.config.k
  const template = ctx.extras.template
  // The task's rules for a prediction (a label of its set, SMILES RDKit parses), as the form checks them.
  const checked = await checkPrediction(answerRules(ctx.session.task, template), input.prediction)
  const fieldErrors: Record<string, string[]> = {}
  if (j > 1 && input.matchPrev === undefined) fieldErrors.matchPrev = ['Answer: does the prediction match yours?']
  if (j > 1 && input.agreePrev === undefined) fieldErrors.agreePrev = ['Answer: does the explanation agree with yours?']
  if (!checked.ok) fieldErrors.prediction = [checked.error]
  if (fieldErrors.matchPrev || fieldErrors.agreePrev)
    throw badRequest('Answer both questions about your partner’s message.', fieldErrors)
  if (!checked.ok) throw badRequest(checked.error, fieldErrors)
  const prediction = checked.value
  const log = ctx.session.messages
  const ownPrev = log.find((m) => m.seq === j - 2)
  const derived = derivedHumanTag({
    j,
    k,
    matchPrev: input.matchPrev ?? true,
    agreePrev: input.agreePrev ?? true,
    own: { y: prediction, e: input.explanation },
    ownPrev: ownPrev ? { y: ownPrev.prediction, e: ownPrev.explanation } : undefined,
  })
  const tag = input.tag ?? derived
  const matchComputed = await computedMatch({ j, task: ctx.session.task, template, messages: log, prediction })
  if (!isTagAllowed(tag, j, k)) {
    throw badRequest(
      tag === 'REJECT'
        ? `REJECT is allowed only after message ${k}; this is message ${j}.`
        : `${tag} is not allowed at message ${j}. Allowed: ${allowedTags(j, k, derived).join(', ')}.`,
      { tag: ['Choose an allowed tag.'] },
    )
  }
  return {
    message: { seq: j, sender: ctx.seat, tag, prediction, explanation: input.explanation },
    context: { person: ctx.actor.email },
    meta: {
      matchPrev: input.matchPrev,
      agreePrev: input.agreePrev,
      // Parley's own MATCH of the same two predictions, kept beside the person's judgement (which
      // stays the protocol's input), so the two can be compared later.
      matchComputed,
      derivedTag: derived,
      chosen: tag !== derived,
      audit: { tag, derived, matchPrev: input.matchPrev ?? null, matchComputed },
    },
  }
}
