import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LabelProb } from './metrics'
import { replay } from '../../../lib/protocols/types'
import {
  type EvinceConfig,
  type EvinceMessage,
  type EvinceState,
  evince,
  evinceConfig,
  finalDistribution,
  ProtocolErrorCodes,
} from './index'

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../tests/fixtures/${name}.json`, import.meta.url), 'utf8'))

/** Plays a whole debate: each round's two turns, then CRIT (scores per round from `crit`), then a report. */
function play(
  config: EvinceConfig,
  rounds: Array<{ A: LabelProb[]; B: LabelProb[] }>,
  crit: (r: number) => [number, number] = () => [0.5, 0.5],
) {
  let state: EvinceState = evince.init(config, {})
  const asked: unknown[] = []
  for (;;) {
    const ask = evince.next(state)
    asked.push(ask)
    if (ask.done) return { state, ask, asked }
    let msg: EvinceMessage
    if (ask.kind === 'turn') {
      const r = rounds[ask.round - 1]
      if (!r) throw new Error(`the script has no round ${ask.round}`)
      msg = {
        seq: ask.j,
        kind: 'turn',
        sender: ask.seat as 'A' | 'B',
        round: ask.round,
        predictions: r[ask.seat as 'A' | 'B'],
        arguments: [],
        counterArguments: [],
      }
    } else if (ask.kind === 'crit') {
      const [a, b] = crit(ask.round)
      msg = {
        seq: ask.j,
        kind: 'crit',
        sender: 'moderator',
        round: ask.round,
        target: ask.target,
        score: ask.target === 'A' ? a : b,
        reasons: [],
        rivals: [],
        comment: '',
      }
    } else {
      msg = {
        seq: ask.j,
        kind: 'report',
        sender: 'moderator',
        conclusion: 'done',
        arguments: [],
        counterArguments: [],
        missingInformation: [],
        labTests: [],
      }
    }
    state = evince.apply(state, msg)
  }
}

const cfg = (over: Partial<EvinceConfig> = {}) => evinceConfig.parse(over)
const d = (...xs: Array<[string, number]>) => xs.map(([label, probability]) => ({ label, probability }))

describe('EVINCE protocol', () => {
  it('asks A, B, CRIT of A, CRIT of B per round, with Δ 0.9, 0.9, 0.675 …', () => {
    const { rounds } = fixture('jaundice')
    const { asked, ask } = play(cfg({ maxRounds: 3 }), rounds)
    const kinds = (asked as Array<{ done: boolean; seat?: string; kind?: string; delta?: number; round?: number }>)
      .filter((a) => !a.done)
      .map((a) => `${a.round}${a.kind === 'turn' ? a.seat : a.kind === 'crit' ? 'c' : 'r'}`)
    expect(kinds).toEqual(['1A', '1B', '1c', '1c', '2A', '2B', '2c', '2c', '3A', '3B', '3c', '3c', '3r'])
    const deltas = (asked as Array<{ kind?: string; seat?: string; delta?: number }>)
      .filter((a) => a.kind === 'turn' && a.seat === 'A')
      .map((a) => a.delta)
    expect(deltas).toEqual([0.9, 0.9, expect.closeTo(0.675, 12)])
    expect(ask).toEqual({ done: true, reason: 'max-rounds' })
  })

  it('the Jaundice swap in round 2 is no plateau and no stop; the Dengue agreement in round 3 stops', () => {
    const j = play(cfg({ maxRounds: 5 }), fixture('jaundice').rounds.concat([fixture('jaundice').rounds[2]]))
    // Round 2 swaps the lists: WD and MI are unchanged (equality passes the loop test), both moved.
    expect(j.state.rounds[1]?.metrics?.wd).toBeCloseTo(j.state.rounds[0]?.metrics?.wd ?? -1, 12)
    // Round 4 repeats round 3: a plateau (neither distribution moved).
    expect(j.ask).toEqual({ done: true, reason: 'plateau' })
    expect(j.state.rounds).toHaveLength(4)
    const dg = play(cfg({ k: 3 }), fixture('dengue').rounds)
    expect(dg.ask).toEqual({ done: true, reason: 'agreement' })
    expect(dg.state.rounds).toHaveLength(3)
    // P_f of identical lists is that list.
    expect(finalDistribution(dg.state)?.crit).toEqual(
      d(['Dengue Fever', 0.6], ['Chikungunya', 0.35], ['Zika Virus', 0.05]).map((x) => ({
        ...x,
        probability: expect.closeTo(x.probability, 12),
      })),
    )
  })

  it('stops when WD rises, MI falls or CRIT falls beyond τ', () => {
    const close = { A: d(['x', 0.6], ['y', 0.4]), B: d(['x', 0.5], ['y', 0.5]) }
    const apart = { A: d(['x', 0.9], ['y', 0.1]), B: d(['x', 0.1], ['y', 0.9]) }
    expect(play(cfg(), [close, apart]).ask).toMatchObject({ done: true, reason: 'wd-rose' })
    const r1 = { A: d(['x', 0.7], ['y', 0.3]), B: d(['x', 0.3], ['y', 0.7]) }
    const r2 = { A: d(['x', 0.65], ['y', 0.35]), B: d(['x', 0.35], ['y', 0.65]) }
    const falling = play(cfg(), [r1, r2], (r) => (r === 1 ? [0.8, 0.8] : [0.5, 0.5]))
    expect(falling.ask).toMatchObject({ done: true, reason: 'crit-fell' })
    expect(falling.state.stopChecks).toEqual(['crit-fell'])
    // Within τ a small CRIT dip does not stop it.
    const steady = play(cfg({ maxRounds: 2 }), [r1, r2], (r) => (r === 1 ? [0.8, 0.8] : [0.795, 0.795]))
    expect(steady.ask).toMatchObject({ done: true, reason: 'max-rounds' })
  })

  it('without CRIT the loop test uses WD and MI and P_f weights the agents equally; no report when off', () => {
    const r = { A: d(['x', 0.8], ['y', 0.2]), B: d(['y', 1]) }
    const { state, ask, asked } = play(cfg({ crit: false, report: false, maxRounds: 1 }), [r])
    expect(ask).toEqual({ done: true, reason: 'max-rounds' })
    expect(asked.filter((a) => (a as { kind?: string }).kind === 'crit')).toHaveLength(0)
    expect(finalDistribution(state)?.crit).toEqual([
      { label: 'y', probability: expect.closeTo(0.6, 12) },
      { label: 'x', probability: expect.closeTo(0.4, 12) },
    ])
  })

  it('refuses out-of-turn, mis-numbered, oversized and post-debate messages', () => {
    const s0 = evince.init(cfg({ k: 2, maxRounds: 1, crit: false, report: false }), {})
    const turn = (seq: number, sender: 'A' | 'B', predictions = d(['x', 1])) =>
      ({ seq, kind: 'turn', sender, round: 1, predictions, arguments: [], counterArguments: [] }) as EvinceMessage
    expect(() => evince.apply(s0, turn(1, 'B'))).toThrow(expect.objectContaining({ code: 'out-of-turn' }))
    expect(() => evince.apply(s0, turn(2, 'A'))).toThrow(expect.objectContaining({ code: 'wrong-seq' }))
    expect(() => evince.apply(s0, turn(1, 'A', d(['x', 0.5], ['y', 0.3], ['z', 0.2])))).toThrow(
      expect.objectContaining({ code: 'too-many-labels' }),
    )
    expect(() => evince.apply(s0, { ...turn(1, 'A'), predictions: [] } as EvinceMessage)).toThrow(
      expect.objectContaining({ code: 'invalid-message' }),
    )
    const done = evince.apply(evince.apply(s0, turn(1, 'A')), turn(2, 'B'))
    expect(evince.next(done)).toEqual({ done: true, reason: 'agreement' })
    expect(() => evince.apply(done, turn(3, 'A'))).toThrow(expect.objectContaining({ code: 'session-over' }))
    expect(ProtocolErrorCodes).toContain('out-of-turn')
  })

  it('property: never more than maxRounds rounds, always ends with a reason, and replay equals the fold', () => {
    const dist = fc
      .array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.integer({ min: 1, max: 9 })), {
        minLength: 1,
        maxLength: 3,
      })
      .map((xs) => {
        const m = new Map<string, number>()
        for (const [l, w] of xs) m.set(l, (m.get(l) ?? 0) + w)
        const s = [...m.values()].reduce((a, b) => a + b, 0)
        return [...m].map(([label, w]) => ({ label, probability: w / s }))
      })
    fc.assert(
      fc.property(
        fc.array(fc.record({ A: dist, B: dist }), { minLength: 8, maxLength: 8 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 16, maxLength: 16 }),
        (rounds, maxRounds, crits) => {
          const config = cfg({ k: 3, maxRounds })
          const { state, ask } = play(config, rounds, (r) => [crits[2 * r - 2] ?? 0, crits[2 * r - 1] ?? 0])
          expect(ask.done).toBe(true)
          expect(state.rounds.length).toBeLessThanOrEqual(maxRounds)
          expect(state.stop).not.toBeNull()
          expect(replay(evince, config, {}, state.messages)).toEqual(state)
        },
      ),
    )
  })
})
