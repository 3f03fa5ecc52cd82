import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ProtocolError } from '../../../lib/protocols/types'
import { legalTags } from './agent'
import { answerProblem, type PxpConfig, type PxpMessage, type PxpState, pxp, pxpConfig } from './protocol'
import { PXP_TAGS, type PxpSeat, seatForMessage } from './tags'

/** An instance: the rules never read it. */
const INSTANCE = { input: { x: 1 }, prediction: 'y', explanation: 'e' }

/**
 * PXP's rules for one message (Procedure 1/2): the number and sender of j, a tag allowed at j, and a
 * prediction that shows something. A property test: random well-typed garbage from an LLM seat is
 * accepted exactly when it obeys them, written out again here independently of `apply`.
 */

const cfg = (c: Partial<PxpConfig> = {}): PxpConfig => pxpConfig.parse(c)

describe('PXP: apply refuses an answer that shows nothing', () => {
  it('an empty, blank or invisible prediction is refused; an empty explanation is not (a ground truth may have none)', () => {
    const s = pxp.init(cfg(), INSTANCE)
    const first = (prediction: string, explanation = 'e'): PxpMessage => ({
      seq: 1,
      sender: 'm',
      tag: 'INIT',
      prediction,
      explanation,
    })
    for (const y of ['', '   ', '\n\t', '\u200b\u200b', '\ufeff'])
      expect(() => pxp.apply(s, first(y)), JSON.stringify(y)).toThrow(
        expect.objectContaining({ code: 'invalid-answer' }),
      )
    expect(pxp.apply(s, first('Pneumonia', '')).messages).toHaveLength(1)
    expect(pxp.apply(s, first('-')).messages).toHaveLength(1)
    expect(answerProblem('CCO', 'x')).toBeNull()
    expect(answerProblem('\u200b', 'x')).toBe('The prediction is empty: it shows no character.')
  })
})

const PREDICTIONS = ['', ' ', '\u200b', '\ufeff\u200b', '\n', 'Pneumonia', 'CCO.CC(=O)O', '-', ' y ']
const EXPLANATIONS = ['', 'Because.', '\u200b', 'simulated explanation']
const visible = (s: string) => /[^\p{White_Space}\p{Cf}]/u.test(s)

/** A valid prefix: INIT, then REFUTE (never a Stop) up to `steps` messages or the bound. */
function prefix(config: PxpConfig, steps: number): PxpState {
  let s = pxp.init(config, INSTANCE)
  for (let j = 1; j <= steps; j++) {
    const ask = pxp.next(s)
    if (ask.done) break
    s = pxp.apply(s, {
      seq: j,
      sender: ask.seat,
      tag: j === 1 ? 'INIT' : 'REFUTE',
      prediction: 'p',
      explanation: 'e',
    })
  }
  return s
}

describe('PXP property: garbage from an LLM seat never becomes a message', () => {
  it('apply accepts exactly the messages with the right number, sender, an allowed tag and a visible prediction', () => {
    fc.assert(
      fc.property(
        fc.record({
          n: fc.integer({ min: 1, max: 10 }),
          k: fc.integer({ min: 1, max: 4 }),
          steps: fc.integer({ min: 0, max: 10 }),
          seqOffset: fc.constantFrom(0, 0, 0, 1, -1, 2),
          sender: fc.constantFrom<PxpSeat>('m', 'h'),
          tag: fc.constantFrom(...PXP_TAGS),
          prediction: fc.oneof(fc.constantFrom(...PREDICTIONS), fc.string({ maxLength: 4 })),
          explanation: fc.oneof(fc.constantFrom(...EXPLANATIONS), fc.string({ maxLength: 4 })),
        }),
        (g) => {
          const config = cfg({ n: g.n, k: g.k })
          const state = prefix(config, g.steps)
          const ask = pxp.next(state)
          const j = state.j
          const msg: PxpMessage = {
            seq: j + g.seqOffset,
            sender: g.sender,
            tag: g.tag,
            prediction: g.prediction,
            explanation: g.explanation,
          }
          const ok =
            !ask.done &&
            g.seqOffset === 0 &&
            g.sender === seatForMessage(j) &&
            legalTags(j, g.k).includes(g.tag) &&
            visible(g.prediction)
          let after: PxpState
          try {
            after = pxp.apply(state, msg)
          } catch (err) {
            expect(err).toBeInstanceOf(ProtocolError)
            expect(ok, `refused: ${(err as Error).message}`).toBe(false)
            return
          }
          expect(ok, `accepted ${JSON.stringify(msg)}`).toBe(true)
          // The state's invariants: one more message, numbered and sent in turn, each tag allowed at
          // its j, each prediction visible, l_sender the new tag, never more than n messages.
          expect(after.j).toBe(j + 1)
          expect(after.messages).toHaveLength(j)
          expect(after.messages.length).toBeLessThanOrEqual(g.n)
          after.messages.forEach((m, i) => {
            expect(m.seq).toBe(i + 1)
            expect(m.sender).toBe(seatForMessage(i + 1))
            expect(legalTags(i + 1, g.k)).toContain(m.tag)
            expect(visible(m.prediction)).toBe(true)
          })
          expect(after.latest[g.sender]).toBe(g.tag)
        },
      ),
      { numRuns: 1500 },
    )
  })
})
