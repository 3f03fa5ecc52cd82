import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalLabel } from './metrics'
import { ProtocolError } from '../../../lib/protocols/types'
import {
  EVINCE_SUM_TOLERANCE,
  type EvinceConfig,
  type EvinceMessage,
  type EvinceState,
  evince,
  evinceConfig,
  turnProblem,
} from './index'

/**
 * What `apply` refuses in a debater's turn, and a property test: random well-typed garbage from an
 * LLM seat is accepted only when it obeys the rules, so no state ever holds a distribution that
 * breaks them. The rules are written out again here (`obeys`), independently of `turnProblem`.
 */

const cfg = (over: Partial<EvinceConfig> = {}) => evinceConfig.parse(over)
const turn = (seq: number, sender: 'A' | 'B', predictions: Array<{ label: string; probability: number }>) =>
  ({ seq, kind: 'turn', sender, round: 1, predictions, arguments: [], counterArguments: [] }) as EvinceMessage
const refusal = (state: EvinceState, msg: EvinceMessage) => {
  try {
    evince.apply(state, msg)
    return null
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError)
    return (err as ProtocolError).code
  }
}

describe('EVINCE: apply refuses a distribution that breaks the rules', () => {
  const s0 = evince.init(cfg({ k: 3 }), {})

  it('the issue: a one-label distribution at 200 % is refused at once, and so is a sum of 0 (not only when B answers)', () => {
    expect(refusal(s0, turn(1, 'A', [{ label: 'simulated label', probability: 2 }]))).toBe('invalid-distribution')
    // A sum of 0 used to pass A's turn and fail only when B's turn completed the round.
    expect(refusal(s0, turn(1, 'A', [{ label: 'Flu', probability: 0 }]))).toBe('invalid-distribution')
    const afterA = evince.apply(s0, turn(1, 'A', [{ label: 'Flu', probability: 1 }]))
    expect(refusal(afterA, turn(2, 'B', [{ label: 'Flu', probability: 0 }]))).toBe('invalid-distribution')
    expect(() => evince.apply(s0, turn(1, 'A', [{ label: 'simulated label', probability: 2 }]))).toThrow(
      /sum to 200 %; they must sum to 100 % \(within 5 %\)/,
    )
  })

  it(`sums within ${EVINCE_SUM_TOLERANCE} of 1 pass (the paper's Gemini round at 95 %), beyond it they do not`, () => {
    const gemini = [
      { label: 'Viral Infection', probability: 0.6 },
      { label: 'Autoimmune Disease', probability: 0.2 },
      { label: 'Bacterial Infection', probability: 0.15 },
    ]
    expect(refusal(s0, turn(1, 'A', gemini))).toBeNull()
    expect(
      refusal(
        s0,
        turn(1, 'A', [
          { label: 'x1', probability: 0.5 },
          { label: 'x2', probability: 0.44 },
        ]),
      ),
    ).toBe('invalid-distribution')
    expect(
      refusal(
        s0,
        turn(1, 'A', [
          { label: 'x1', probability: 0.55 },
          { label: 'x2', probability: 0.5 },
        ]),
      ),
    ).toBeNull()
    expect(
      refusal(
        s0,
        turn(1, 'A', [
          { label: 'x1', probability: 0.6 },
          { label: 'x2', probability: 0.5 },
        ]),
      ),
    ).toBe('invalid-distribution')
  })

  it('probabilities in [0, 1] and finite; labels that name something, once; at most k', () => {
    expect(
      refusal(
        s0,
        turn(1, 'A', [
          { label: 'Flu', probability: 60 },
          { label: 'Cold', probability: 40 },
        ]),
      ),
    ).toBe('invalid-distribution')
    expect(refusal(s0, turn(1, 'A', [{ label: 'Flu', probability: Number.NaN }]))).toBe('invalid-message')
    expect(
      refusal(
        s0,
        turn(1, 'A', [
          { label: 'Flu', probability: -0.1 },
          { label: 'Cold', probability: 1.1 },
        ]),
      ),
    ).toBe('invalid-distribution')
    // The prompt's own placeholder, echoed back, and a parenthetical alone name no diagnosis.
    expect(refusal(s0, turn(1, 'A', [{ label: '…', probability: 1 }]))).toBe('invalid-label')
    expect(refusal(s0, turn(1, 'A', [{ label: '(unknown)', probability: 1 }]))).toBe('invalid-label')
    expect(refusal(s0, turn(1, 'A', [{ label: '  ', probability: 1 }]))).toBe('invalid-message')
    // Listed twice as the metrics compare labels (case, parentheticals).
    expect(
      refusal(
        s0,
        turn(1, 'A', [
          { label: 'Hepatitis C', probability: 0.5 },
          { label: 'hepatitis c (HCV)', probability: 0.5 },
        ]),
      ),
    ).toBe('duplicate-label')
    const four = ['a1', 'a2', 'a3', 'a4'].map((label) => ({ label, probability: 0.25 }))
    expect(refusal(s0, turn(1, 'A', four))).toBe('too-many-labels')
  })

  it('a closed label space admits its labels and explicit aliases of them, nothing else (the demo placeholder included)', () => {
    const space = evince.init(cfg({ k: 2, labels: ['Dengue Fever', 'Malaria'], aliases: { DF: 'Dengue Fever' } }), {})
    expect(refusal(space, turn(1, 'A', [{ label: 'dengue fever', probability: 1 }]))).toBeNull()
    expect(
      refusal(
        space,
        turn(1, 'A', [
          { label: 'DF', probability: 0.7 },
          { label: 'Malaria', probability: 0.3 },
        ]),
      ),
    ).toBeNull()
    expect(refusal(space, turn(1, 'A', [{ label: 'simulated label', probability: 1 }]))).toBe('label-not-in-space')
    expect(refusal(space, turn(1, 'A', [{ label: 'Zika Virus', probability: 1 }]))).toBe('label-not-in-space')
  })

  it('turnProblem says what is wrong in words a model can act on', () => {
    const c = cfg({ k: 2 })
    expect(turnProblem(c, [{ label: 'Flu', probability: 1 }])).toBeNull()
    expect(turnProblem(c, [{ label: 'Flu', probability: 0.5 }])?.message).toBe(
      'the probabilities sum to 50 %; they must sum to 100 % (within 5 %)',
    )
    expect(turnProblem(c, [])?.code).toBe('invalid-distribution')
  })
})

// ---- the property ----

const POOL = [
  'Dengue Fever',
  'dengue fever',
  'Dengue Fever (DF)',
  'DF',
  'Malaria',
  'Zika Virus',
  'simulated label',
  'Typhoid',
  '',
  '   ',
  '…',
  '-',
  '(unknown)',
  '???',
  'x'.repeat(201),
]
const SPACE = ['Dengue Fever', 'Malaria', 'Typhoid']
const probability = fc.oneof(
  fc.constantFrom(0, 1, 2, 0.5, 0.25, 0.95, 100, 60, -0.1, 1 + 1e-7, Number.NaN, Number.POSITIVE_INFINITY),
  fc.double({ min: -1, max: 3, noNaN: true }),
  fc.integer({ min: 0, max: 10 }).map((x) => x / 10),
)
/** Anything of the right type, and lists that are nearly right (normalised, then nudged). */
const predictions = fc.oneof(
  fc.array(fc.record({ label: fc.constantFrom(...POOL), probability }), { maxLength: 6 }),
  fc
    .tuple(
      fc.uniqueArray(fc.constantFrom(...POOL.slice(0, 8)), { minLength: 1, maxLength: 5 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 5, maxLength: 5 }),
      fc.constantFrom(0, 0.03, -0.04, 0.06, -0.2, 1),
    )
    .map(([labels, weights, nudge]) => {
      const w = labels.map((_, i) => weights[i] as number)
      const s = w.reduce((a, b) => a + b, 0) || 1
      return labels.map((label, i) => ({
        label,
        probability: (w[i] as number) / s + (i === 0 ? nudge : 0),
      }))
    }),
)
const scoredReason = fc.record({
  reason: fc.string({ maxLength: 20 }),
  validity: fc.oneof(fc.integer({ min: -2, max: 12 }), fc.double({ min: 0, max: 11, noNaN: true })),
  credibility: fc.oneof(fc.integer({ min: -2, max: 12 }), fc.double({ min: 0, max: 11, noNaN: true })),
})

/** The rules, written out independently of the protocol's code. */
function obeys(config: EvinceConfig, list: ReadonlyArray<{ label: string; probability: number }>): boolean {
  if (list.length < 1 || list.length > config.k) return false
  const seen = new Set<string>()
  const space = new Set(config.labels.map((l) => canonicalLabel(l, config.aliases)))
  let sum = 0
  for (const { label, probability: p } of list) {
    const t = label.trim()
    if (t.length < 1 || t.length > 200 || !/[\p{L}\p{N}]/u.test(t)) return false
    const c = canonicalLabel(t, config.aliases)
    if (!/[\p{L}\p{N}]/u.test(c) || seen.has(c)) return false
    seen.add(c)
    if (config.labels.length && !space.has(c)) return false
    if (!Number.isFinite(p) || p < 0 || p > 1) return false
    sum += p
  }
  return Math.abs(sum - 1) <= EVINCE_SUM_TOLERANCE + 1e-9
}

const inRange = (x: number, lo: number, hi: number) => Number.isFinite(x) && x >= lo && x <= hi

/** A valid debate prefix of `steps` messages: one-label turns from the space, CRIT 0.5. */
function prefix(config: EvinceConfig, steps: number): EvinceState {
  let state: EvinceState = evince.init(config, {})
  for (let i = 0; i < steps; i++) {
    const ask = evince.next(state)
    if (ask.done) break
    const msg: EvinceMessage =
      ask.kind === 'turn'
        ? ({
            ...turn(ask.j, ask.seat as 'A' | 'B', [{ label: SPACE[i % 2] as string, probability: 1 }]),
            round: ask.round,
          } as EvinceMessage)
        : ask.kind === 'crit'
          ? {
              seq: ask.j,
              kind: 'crit',
              sender: 'moderator',
              round: ask.round,
              target: ask.target,
              score: 0.5,
              reasons: [],
              rivals: [],
              comment: '',
            }
          : {
              seq: ask.j,
              kind: 'report',
              sender: 'moderator',
              conclusion: 'c',
              arguments: [],
              counterArguments: [],
              missingInformation: [],
              labTests: [],
            }
    state = evince.apply(state, msg)
  }
  return state
}

describe('EVINCE property: garbage from an LLM seat never becomes a turn', () => {
  it('apply accepts exactly the in-turn messages that obey the rules; every accepted distribution sums to 1 ± tol', () => {
    fc.assert(
      fc.property(
        fc.record({
          k: fc.integer({ min: 1, max: 4 }),
          closed: fc.boolean(),
          crit: fc.boolean(),
          steps: fc.integer({ min: 0, max: 9 }),
          seqOffset: fc.constantFrom(0, 0, 0, 0, 1, -1),
          swapSender: fc.constantFrom(false, false, false, true),
          predictions,
          score: fc.oneof(fc.double({ min: -0.5, max: 1.5, noNaN: true }), fc.constantFrom(0, 1, Number.NaN)),
          reasons: fc.array(scoredReason, { maxLength: 3 }),
        }),
        (g) => {
          const config = cfg({
            k: g.k,
            crit: g.crit,
            maxRounds: 3,
            labels: g.closed ? SPACE : [],
            aliases: { DF: 'Dengue Fever' },
          })
          const state = prefix(config, g.steps)
          const ask = evince.next(state)
          const seq = (ask.done ? state.messages.length + 1 : ask.j) + g.seqOffset
          let msg: EvinceMessage
          let ok: boolean
          if (ask.done || ask.kind === 'turn') {
            const sender = (ask.done ? 'A' : ask.seat) as 'A' | 'B'
            const from = g.swapSender ? (sender === 'A' ? 'B' : 'A') : sender
            msg = {
              ...turn(seq, from, g.predictions),
              round: ask.done ? state.rounds.length : ask.round,
            } as EvinceMessage
            ok = !ask.done && g.seqOffset === 0 && !g.swapSender && obeys(config, g.predictions)
          } else if (ask.kind === 'crit') {
            msg = {
              seq,
              kind: 'crit',
              sender: 'moderator',
              round: ask.round,
              target: g.swapSender ? (ask.target === 'A' ? 'B' : 'A') : ask.target,
              score: g.score,
              reasons: g.reasons,
              rivals: [],
              comment: '',
            }
            ok =
              g.seqOffset === 0 &&
              !g.swapSender &&
              inRange(g.score, 0, 1) &&
              g.reasons.every((r) => inRange(r.validity, 1, 10) && inRange(r.credibility, 1, 10))
          } else return
          let after: EvinceState
          try {
            after = evince.apply(state, msg)
          } catch (err) {
            expect(err).toBeInstanceOf(ProtocolError)
            expect(ok, `refused: ${(err as Error).message}`).toBe(false)
            return
          }
          expect(ok, `accepted ${JSON.stringify(msg)}`).toBe(true)
          expect(after.messages).toHaveLength(state.messages.length + 1)
          for (const r of after.rounds)
            for (const t of [r.A, r.B]) if (t) expect(obeys(config, t.predictions), JSON.stringify(t)).toBe(true)
        },
      ),
      { numRuns: 1500 },
    )
  })
})
