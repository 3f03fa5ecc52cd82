// Whole games through the protocol and clembench's scorer, with the expected scores worked out by hand.
// The game: 5 slots, turns to 0, when 1, by 2, from 3, class 4 (tests/support/scorekeeping.ts); probing
// round r has r slots whose ground truth is "yes", so the 30 probes have 15 yes and 15 no.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { tripInstance, truthful } from '../tests/support'
import { scoresJson } from './clemscore'
import { isDone, replay } from '../../../lib/protocols/types'
import {
  answererMessage,
  episodeOf,
  gameMaster,
  playGame,
  type ScorekeepingAsk,
  type ScorekeepingInstanceInput,
  type ScorekeepingMessage,
  type ScorekeepingState,
  scorekeeping,
} from './index'

const scoresOf = (reply: (a: ScorekeepingAsk, s: ScorekeepingState) => string, instance = tripInstance()) =>
  scoresJson(episodeOf(playGame(instance, reply)))

const turn = (requests: number, accuracy: number, filled?: number) => ({
  'Request Count': requests,
  'Parsed Request Count': requests,
  'Violated Request Count': 0,
  Accuracy: accuracy,
  ...(filled === undefined ? {} : { 'Slot Filled?': filled }),
})

describe('hand-computed episodes', () => {
  it('a perfect game: every probe right, every slot filled → Main Score 100', () => {
    // 5 probes in round 0; an answer and 5 probes in rounds 1–5 → 5 + 5·6 = 35 requests
    const s = scoresOf(truthful)
    expect(s['turn scores']).toEqual({
      0: turn(5, 1),
      1: turn(6, 1, 1),
      2: turn(6, 1, 1),
      3: turn(6, 1, 1),
      4: turn(6, 1, 1),
      5: turn(6, 1, 1),
    })
    expect(s['episode scores']).toEqual({
      'Middle-Accuracy': 1,
      Accuracy: 1,
      Kappa: 1,
      'Truncated Kappa': 1,
      'Slot-Filling-Accuracy': 1,
      'Main Score': 100,
      Aborted: 0,
      Lose: 0,
      Success: 1,
      'Request Count': 35,
      'Parsed Request Count': 35,
      'Violated Request Count': 0,
      'Request Success Ratio': 1,
    })
  })

  it('every probe right but one slot answered wrong: SF = 4/5 → Main Score 800/9, no Success', () => {
    // κ = 1, SF = 4/5: 100·2·(4/5)·1/(4/5 + 1) = 100·(8/5)/(9/5) = 800/9; Success needs SF = 1 too
    const s = scoresOf((a, st) => (a.kind === 'answer' && a.slot === 'by' ? 'ANSWER: By plane.' : truthful(a, st)))
    expect(s['turn scores'][3]).toEqual(turn(6, 1, 0)) // "by" is asked in round 3
    expect(s['episode scores']).toMatchObject({ Accuracy: 1, Kappa: 1, 'Slot-Filling-Accuracy': 0.8 })
    expect(s['episode scores']['Main Score']).toBeCloseTo(800 / 9, 12)
    expect(s['episode scores']).toMatchObject({ Aborted: 0, Lose: 1, Success: 0 })
  })

  it('always "no": accuracy 1/2 but κ = 0 → Main Score 0', () => {
    // gold 15 yes / 15 no, pred 30 no: p_o = 1/2, p_e = 1/2·1 + 1/2·0 = 1/2 → κ = 0;
    // harmonic mean of SF = 1 and 0 is 0. Round r is right on its 5 − r "no" slots.
    const s = scoresOf((a, st) => (a.kind === 'answer' ? truthful(a, st) : 'ASIDE: No, not yet.'))
    expect(Object.values(s['turn scores']).map((t) => t.Accuracy)).toEqual([1, 0.8, 0.6, 0.4, 0.2, 0])
    expect(s['episode scores']).toMatchObject({
      'Middle-Accuracy': 0.6, // round 2: to and when are shared, 3 of 5 right
      Accuracy: 0.5,
      Kappa: 0,
      'Truncated Kappa': 0,
      'Slot-Filling-Accuracy': 1,
      'Main Score': 0,
      Aborted: 0,
      Lose: 1,
      Success: 0,
    })
  })

  it('probes that lag one turn behind: κ = 2/3, Main Score 80', () => {
    // "yes" only from round turn + 2 on: each slot is missed once, in round turn + 1 (gold 1, pred 0).
    // Confusion (gold × pred): no/no 15, no/yes 0, yes/no 5, yes/yes 10 → p_o = 25/30 = 5/6;
    // gold 15/15, pred 20 no / 10 yes → p_e = 1/2·2/3 + 1/2·1/3 = 1/2 → κ = (5/6 − 1/2)/(1/2) = 2/3
    // (sklearn: expected off-diagonal 20·15/30 + 10·15/30 = 15, observed 5 → 1 − 5/15).
    // Main = 100·2·1·(2/3)/(1 + 2/3) = 100·(4/3)/(5/3) = 80. Every round after 0 misses one slot: 0.8.
    const lagging = (a: ScorekeepingAsk, st: ScorekeepingState) => {
      if (a.kind === 'answer') return truthful(a, st)
      const i = st.instance.slots.findIndex((x) => x.name === (a as { slot: string }).slot)
      return a.round > st.gtTurn[i]! + 1 ? 'ASIDE: yes' : 'ASIDE: no'
    }
    const s = scoresOf(lagging)
    expect(Object.values(s['turn scores']).map((t) => t.Accuracy)).toEqual([1, 0.8, 0.8, 0.8, 0.8, 0.8])
    const e = s['episode scores']
    expect(e['Middle-Accuracy']).toBe(0.8)
    expect(e.Accuracy).toBe(25 / 30)
    expect(e.Kappa).toBe(1 - 5 / 15)
    expect(e['Truncated Kappa']).toBe(e.Kappa)
    expect(e['Main Score']).toBeCloseTo(80, 12)
    expect([e.Aborted, e.Lose, e.Success]).toEqual([0, 1, 0])
  })

  it('an abort in a probe: turn scores for the played rounds, null episode scores', () => {
    // round 2: the answer, "from" valid, "to" invalid 5 times → rounds 0 and 1 played
    const s = scoresOf((a, st) =>
      a.kind === 'probe-answer' && a.round === 2 && a.slot === 'to' ? 'ASIDE: Perhaps.' : truthful(a, st),
    )
    expect(s['turn scores']).toEqual({ 0: turn(5, 1), 1: turn(6, 1, 1) })
    expect(s['episode scores']).toEqual({
      // no Middle-Accuracy: round 2 was not played
      Accuracy: null,
      Kappa: null,
      'Truncated Kappa': null,
      'Slot-Filling-Accuracy': null,
      'Main Score': null,
      Aborted: 1,
      Lose: 0,
      Success: 0,
      'Request Count': 5 + 6 + 7,
      'Parsed Request Count': 5 + 6 + 2,
      'Violated Request Count': 5,
      'Request Success Ratio': 13 / 18,
    })
  })

  it('an abort in a slot answer: the middle round was played, so Middle-Accuracy is logged as null', () => {
    const s = scoresOf((a, st) => (a.kind === 'answer' && a.round === 3 ? 'Train.' : truthful(a, st)))
    expect(Object.keys(s['turn scores'])).toEqual(['0', '1', '2'])
    expect(s['episode scores']).toMatchObject({
      'Middle-Accuracy': null,
      Accuracy: null,
      'Main Score': null,
      Aborted: 1,
      Lose: 0,
      Success: 0,
      'Request Count': 5 + 6 + 6 + 1,
      'Parsed Request Count': 17,
      'Violated Request Count': 1,
      'Request Success Ratio': 17 / 18,
    })
  })
})

// ---- properties ----

const instanceArb = fc
  .record({ n: fc.integer({ min: 1, max: 6 }), tries: fc.integer({ min: 1, max: 5 }), seed: fc.nat() })
  .chain(({ n, tries }) => {
    const names = Array.from({ length: n }, (_, i) => `s${i}`)
    const perm = fc.shuffledSubarray(names, { minLength: n, maxLength: n })
    return fc.record({
      tries: fc.constant(tries),
      requestOrder: perm,
      probeOrders: fc.array(perm, { minLength: n + 1, maxLength: n + 1 }),
      names: fc.constant(names),
    })
  })
  .map(
    ({ names, requestOrder, probeOrders, tries }): ScorekeepingInstanceInput => ({
      tag: 'Q',
      // values never contain each other: "<i>-value-<i>"
      slots: names.map((name, i) => ({ name, value: `${i}-value-${i}` })),
      requestOrder,
      requests: names.map((slot) => ({ slot, index: 0, text: `${slot}?` })),
      probes: probeOrders.map((order) => order.map((slot) => ({ slot, index: 0, question: `${slot} known?` }))),
      initialPrompt: 'Play.',
      reprompts: Array.from({ length: tries }, (_, i) => (i ? `Try ${i + 1}.` : '')),
    }),
  )

/** An answerer driven by random numbers: mostly valid, sometimes anticipating, wrong or invalid. */
function randomAnswerer(choices: readonly number[]) {
  let k = 0
  const nextChoice = () => choices[k++ % choices.length]!
  return (a: ScorekeepingAsk, s: ScorekeepingState) => {
    const c = nextChoice()
    const values = s.instance.slots.map((x) => x.value)
    if (a.kind === 'answer') {
      const own = s.instance.slots.find((x) => x.name === a.slot)!.value
      if (c < 60) return `ANSWER: ${own}`
      if (c < 75) return `ANSWER: ${own} and ${values[c % values.length]}` // may anticipate
      if (c < 90) return 'ANSWER: something else'
      return c < 95 ? own : `ANSWER: ${own}\nmore`
    }
    if (c < 40) return 'ASIDE: yes'
    if (c < 75) return 'ASIDE: No.'
    if (c < 85) return 'ASIDE: nope'
    return c < 93 ? 'maybe' : 'ASIDE: \nyes'
  }
}

describe('properties', () => {
  it('always ends within (n + 1)·n·T probe exchanges plus n request exchanges; replay = fold; scores in range', () => {
    fc.assert(
      fc.property(instanceArb, fc.array(fc.nat(99), { minLength: 1, maxLength: 50 }), (instance, choices) => {
        const n = instance.slots.length
        const tries = instance.reprompts!.length
        const reply = randomAnswerer(choices)
        let state = scorekeeping.init({}, instance)
        const bound = 2 * ((n + 1) * n * tries + n) // two messages per exchange
        for (let step = 0; ; step++) {
          expect(step).toBeLessThanOrEqual(bound)
          const ask = scorekeeping.next(state)
          if (isDone(ask)) break
          const msg: ScorekeepingMessage =
            ask.seat === 'questioner' ? gameMaster(state, ask) : answererMessage(ask, reply(ask, state))
          state = scorekeeping.apply(state, msg)
        }
        // replay = fold, from the stored (JSON) messages
        const stored = JSON.parse(JSON.stringify(state.messages)) as ScorekeepingMessage[]
        expect(replay(scorekeeping, {}, instance, stored)).toEqual(state)

        const done = scorekeeping.next(state)
        const ep = episodeOf(state)
        const { 'turn scores': turns, 'episode scores': e } = scoresJson(ep)
        expect(Object.keys(turns)).toHaveLength(ep.playedProbeRounds)
        expect(e['Request Count']).toBe(e['Parsed Request Count']! + e['Violated Request Count']!)
        expect(e['Request Success Ratio']).toBeGreaterThanOrEqual(0)
        expect(e['Request Success Ratio']).toBeLessThanOrEqual(1)
        if (isDone(done) && done.reason === 'complete') {
          expect(ep.playedProbeRounds).toBe(n + 1)
          expect(e.Aborted).toBe(0)
          expect(e.Accuracy).toBeGreaterThanOrEqual(0)
          expect(e.Accuracy).toBeLessThanOrEqual(1)
          // gold always has both labels (round 0 all no, round n all yes), so κ is defined
          expect(e.Kappa).toBeGreaterThanOrEqual(-1)
          expect(e.Kappa).toBeLessThanOrEqual(1)
          expect(e['Main Score']).toBeGreaterThanOrEqual(0)
          expect(e['Main Score']).toBeLessThanOrEqual(100)
          expect(e.Lose! + e.Success!).toBe(1)
        } else {
          expect(e.Aborted).toBe(1)
          expect([e.Accuracy, e.Kappa, e['Main Score'], e['Slot-Filling-Accuracy']]).toEqual([null, null, null, null])
          expect([e.Lose, e.Success]).toEqual([0, 0])
          expect(ep.playedProbeRounds).toBeLessThanOrEqual(n)
        }
      }),
      { numRuns: 150 },
    )
  })
})
