import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { tripInstance, truthful } from '../tests/support'
import { isDone, ProtocolError } from '../../../lib/protocols/types'
import {
  answererMessage,
  gameMaster,
  type ScorekeepingAsk,
  type ScorekeepingMessage,
  type ScorekeepingState,
  scorekeeping,
} from './index'

/**
 * The scorekeeping game's line between a game move and a message that is not one. Whatever an LLM
 * answerer writes is a move (clembench parses it; a malformed answer or five unusable probe answers
 * abort the game, and that is recorded); `apply` refuses only what is no protocol message at all:
 * out of turn or mis-numbered, the wrong kind, slot, round or try, after the game, or a text over
 * 100,000 characters. A property test: random well-typed garbage from the answerer seat is accepted
 * exactly then, and every accepted state keeps clembench's bookkeeping consistent.
 */

const NAMES = tripInstance().slots.map((s) => s.name)
const TEXTS = [
  '',
  'ANSWER: Rome',
  'ANSWER: Rome\nand more',
  'ASIDE: yes',
  'ASIDE: Nope',
  'ASIDE: maybe',
  'aside: yes',
  'simulated answer',
  '\n\nANSWER: Oslo\n',
  '[Simulated demo model] Yes.',
]

/** A valid prefix of `steps` messages: truthful answers, or garbage ones (`bad`) that the game records. */
function prefix(steps: number, bad: boolean[]): ScorekeepingState {
  let s = scorekeeping.init({}, tripInstance())
  for (let i = 0; i < steps; i++) {
    const ask = scorekeeping.next(s)
    if (isDone(ask)) break
    s = scorekeeping.apply(
      s,
      ask.seat === 'questioner'
        ? gameMaster(s, ask)
        : answererMessage(ask, bad[i % bad.length] ? 'simulated answer' : truthful(ask, s)),
    )
  }
  return s
}

describe('scorekeeping property: garbage from the answerer seat is a recorded move, or refused', () => {
  it('apply accepts exactly the in-turn answerer messages of at most 100,000 characters; the counts stay consistent', () => {
    fc.assert(
      fc.property(
        fc.record({
          steps: fc.integer({ min: 0, max: 80 }),
          bad: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
          seqOffset: fc.constantFrom(0, 0, 0, 0, 1, -1),
          kind: fc.constantFrom('answer', 'probe-answer', 'answer', 'probe-answer', 'probe', 'request'),
          round: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
          slot: fc.option(fc.constantFrom(...NAMES, 'nope'), { nil: undefined }),
          try: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
          text: fc.oneof(fc.constantFrom(...TEXTS), fc.string({ maxLength: 8 }), fc.constant('x'.repeat(100_001))),
        }),
        (g) => {
          const state = prefix(g.steps, g.bad)
          const ask = scorekeeping.next(state)
          const j = state.messages.length + 1
          const a = isDone(ask) ? null : (ask as ScorekeepingAsk & { slot: string; try?: number })
          // Fields default to the ask's, so most garbage is in turn and only its text is random.
          const round = g.round ?? a?.round ?? 1
          const slot = g.slot ?? a?.slot ?? 'to'
          const tryNumber = g.try ?? a?.try ?? 1
          const msg = {
            seq: j + g.seqOffset,
            sender: 'answerer',
            kind: g.kind,
            round,
            ...(g.kind === 'answer' ? {} : { slot, try: tryNumber }),
            text: g.text,
          } as ScorekeepingMessage
          const ok =
            a !== null &&
            a.seat === 'answerer' &&
            g.seqOffset === 0 &&
            g.kind === a.kind &&
            round === a.round &&
            (g.kind === 'answer' || (slot === a.slot && tryNumber === a.try)) &&
            g.text.length <= 100_000
          let after: ScorekeepingState
          try {
            after = scorekeeping.apply(state, msg)
          } catch (err) {
            expect(err).toBeInstanceOf(ProtocolError)
            expect(ok, `refused: ${(err as Error).message}`).toBe(false)
            return
          }
          expect(ok, `accepted ${JSON.stringify(msg).slice(0, 300)}`).toBe(true)
          expect(after.messages).toHaveLength(j)
          expect(after.messages.at(-1)).toMatchObject({ kind: g.kind, text: g.text })
          for (const [r, n] of after.requestCounts.entries())
            expect(n).toBe((after.parsedRequestCounts[r] ?? 0) + (after.violatedRequestCounts[r] ?? 0))
          expect(after.outcome !== null).toBe(after.cursor.stage === 'over')
          if (after.outcome === 'aborted-answer') expect(after.turns.at(-1)?.parsed).toBeNull()
        },
      ),
      { numRuns: 1500 },
    )
  })
})
