import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PXP_TAGS, type PxpTag } from '@/protocols/pxp/core/tags'
import {
  aggregateRepetitions,
  agentTags,
  countRepetition,
  intelligibilityReport,
  isOneWay,
  isOneWayAtBound,
  isStrong,
  isUltraStrong,
  median,
  reportProportions,
  sessionIntelligibility,
  summarize,
  summaryIntelligibility,
  summaryOneWay,
  type TaggedMessage,
} from './intelligibility'

/** A session from its tags in message order: m at odd j, h at even j. */
const session = (...tags: PxpTag[]): TaggedMessage[] =>
  tags.map((tag, i) => ({ j: i + 1, sender: i % 2 === 0 ? 'm' : 'h', tag }))
const times = <T>(n: number, f: () => T): T[] => Array.from({ length: n }, f)

describe('the definitions on tag sequences', () => {
  it.each<[PxpTag[], boolean, boolean, boolean]>([
    // T_a, oneWay, strong, ultraStrong
    [[], false, false, false],
    [['RATIFY'], true, true, false],
    [['REVISE'], true, true, true],
    [['REVISE', 'RATIFY'], true, true, true],
    [['REFUTE'], false, false, false],
    [['REFUTE', 'RATIFY'], true, false, false],
    [['REFUTE', 'REVISE'], true, false, false],
    [['RATIFY', 'REJECT'], false, false, false],
    [['REVISE', 'REFUTE', 'REJECT'], false, false, false],
    [['REJECT'], false, false, false],
  ])('T = %j: oneWay %s, strong %s, ultra-strong %s', (T, oneWay, strong, ultra) => {
    expect(isOneWay(T)).toBe(oneWay)
    expect(isStrong(T)).toBe(strong)
    expect(isUltraStrong(T)).toBe(ultra)
  })

  it('T_a leaves out INIT and the other agent, and is ordered by j', () => {
    const ms: TaggedMessage[] = [
      { j: 3, sender: 'm', tag: 'REVISE' },
      { j: 1, sender: 'm', tag: 'INIT' },
      { j: 2, sender: 'h', tag: 'REFUTE' },
      { j: 5, sender: 'm', tag: 'RATIFY' },
    ]
    expect(agentTags(ms, 'm')).toEqual(['REVISE', 'RATIFY'])
    expect(agentTags(ms, 'h')).toEqual(['REFUTE'])
    expect(agentTags(ms, 'm', 4)).toEqual(['REVISE'])
  })

  it("the paper's footnote: ⟨INIT_m, RATIFY_h, RATIFY_m⟩ is strongly intelligible for both", () => {
    expect(sessionIntelligibility(session('INIT', 'RATIFY', 'RATIFY'))).toEqual({
      oneWay: { h: true, m: true },
      twoWay: true,
      strong: { h: true, m: true },
      ultraStrong: { h: false, m: false },
      length: 3,
    })
  })

  it("the paper's hypothetical ⟨INIT_m, REVISE_h, REVISE_m, RATIFY_h, RATIFY_m⟩ is ultra-strong for both", () => {
    const p = sessionIntelligibility(session('INIT', 'REVISE', 'REVISE', 'RATIFY', 'RATIFY'))
    expect(p.ultraStrong).toEqual({ h: true, m: true })
  })

  it('a REJECT spoils one-way intelligibility only for the agent that sent it', () => {
    const p = sessionIntelligibility(session('INIT', 'REFUTE', 'RATIFY', 'REJECT'))
    expect(p.oneWay).toEqual({ h: false, m: true })
    expect(p.twoWay).toBe(false)
    expect(p.strong).toEqual({ h: false, m: true })
  })

  it('a session of INIT only is intelligible for nobody', () => {
    const p = sessionIntelligibility(session('INIT'))
    expect(p.oneWay).toEqual({ h: false, m: false })
    expect(p.strong).toEqual({ h: false, m: false })
  })
})

describe('median', () => {
  it.each([
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[16, 15, 17, 16, 16], 16],
    [[10, 12], 11],
    [[7, 7, 8, 8], 7.5],
  ])('median(%j) = %d', (values, m) => {
    expect(median(values)).toBe(m)
  })
  it('refuses an empty list', () => {
    expect(() => median([])).toThrow(RangeError)
  })
})

// Hand-made sessions with known properties (worked out from Definitions 1–2 by hand):
//   S1 ⟨INIT, RATIFY, RATIFY⟩                one-way h,m; strong h,m
//   S2 ⟨INIT, REFUTE, RATIFY, RATIFY⟩        one-way h,m; strong m            (T_h = REFUTE, RATIFY)
//   S3 ⟨INIT, REFUTE, REFUTE, RATIFY, RATIFY⟩ one-way h,m; strong for neither
//   S4 ⟨INIT, REFUTE × 9⟩ (bound 10)         nothing
//   S5 ⟨INIT, REFUTE, REFUTE, REJECT⟩        nothing (the human rejects)
//   S6 ⟨INIT, REFUTE, REVISE, RATIFY, RATIFY⟩ one-way h,m; strong m; ultra-strong m
//   S7 ⟨INIT, REFUTE, REFUTE, REFUTE, REVISE, REJECT⟩ one-way m only, strong for neither
const S1 = () => session('INIT', 'RATIFY', 'RATIFY')
const S2 = () => session('INIT', 'REFUTE', 'RATIFY', 'RATIFY')
const S3 = () => session('INIT', 'REFUTE', 'REFUTE', 'RATIFY', 'RATIFY')
const S4 = () => session('INIT', ...times<PxpTag>(9, () => 'REFUTE'))
const S5 = () => session('INIT', 'REFUTE', 'REFUTE', 'REJECT')
const S6 = () => session('INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY')
const S7 = () => session('INIT', 'REFUTE', 'REFUTE', 'REFUTE', 'REVISE', 'REJECT')
const compose = (...parts: [number, () => TaggedMessage[]][]) => parts.flatMap(([n, f]) => times(n, f))
const constant = (v: number) => ({ median: v, min: v, max: v })

describe('a Fig.-4-shaped table from hand-made sessions', () => {
  it('DRUG column (one repetition of 20 sessions): 18, 20, 18, 11, 18, 0, 7', () => {
    const drug = compose([11, S1], [7, S6], [2, S7])
    const r = intelligibilityReport([drug])
    expect(r.repetitions).toBe(1)
    expect(r.sessions).toBe(20)
    expect(r.oneWay).toEqual({ human: constant(18), machine: constant(20) })
    expect(r.twoWay).toEqual(constant(18))
    expect(r.strong).toEqual({ human: constant(11), machine: constant(18) })
    expect(r.ultraStrong).toEqual({ human: constant(0), machine: constant(7) })
    const p = reportProportions(r)
    expect([p.oneWay.human, p.oneWay.machine, p.twoWay, p.strong.human, p.strong.machine]).toEqual([
      0.9, 1, 0.9, 0.55, 0.9,
    ])
    expect([p.ultraStrong.human, p.ultraStrong.machine]).toEqual([0, 0.35])
  })

  it('RAD column (median of 5 repetitions): 16, 16, 16, 13, 14, 0, 0 with min and max', () => {
    // repetition compositions (S1, S2, S3, S4, S5), 20 sessions each; per repetition
    //   one-way h = one-way m = two-way = S1+S2+S3, strong h = S1, strong m = S1+S2
    const reps = [
      [13, 1, 2, 2, 2], // 16, 13, 14
      [12, 2, 1, 3, 2], // 15, 12, 14
      [14, 1, 2, 2, 1], // 17, 14, 15
      [13, 2, 1, 2, 2], // 16, 13, 15
      [11, 1, 4, 3, 1], // 16, 11, 12
    ].map(([a, b, c, d, e]) => compose([a!, S1], [b!, S2], [c!, S3], [d!, S4], [e!, S5]))
    const r = intelligibilityReport(reps)
    expect(r.repetitions).toBe(5)
    expect(r.sessions).toBe(20)
    expect(r.oneWay).toEqual({ human: { median: 16, min: 15, max: 17 }, machine: { median: 16, min: 15, max: 17 } })
    expect(r.twoWay).toEqual({ median: 16, min: 15, max: 17 })
    expect(r.strong).toEqual({ human: { median: 13, min: 11, max: 14 }, machine: { median: 14, min: 12, max: 15 } })
    expect(r.ultraStrong).toEqual({ human: constant(0), machine: constant(0) })
    const p = reportProportions(r)
    expect([p.oneWay.human, p.twoWay, p.strong.human, p.strong.machine]).toEqual([0.8, 0.8, 0.65, 0.7])

    // Fig. 5: one-way sessions by bound j. By hand for the first repetition (13, 1, 2, 2, 2):
    //   j=1: h 0, m 0 (INIT only) · j=2: h 13 (S1) · j=3: m 14 (S1, S2) · j=4: h 16 (+S2, S3)
    //   j=5: m 16 (+S3) · j≥5 unchanged up to the longest session (S4, 10 messages)
    const rep1 = countRepetition(reps[0]!.map(summarize))
    expect(rep1.byBound.map((b) => [b.j, b.oneWayHuman, b.oneWayMachine])).toEqual([
      [1, 0, 0],
      [2, 13, 0],
      [3, 13, 14],
      [4, 16, 14],
      [5, 16, 16],
      [6, 16, 16],
      [7, 16, 16],
      [8, 16, 16],
      [9, 16, 16],
      [10, 16, 16],
    ])
    // across the repetitions: by message 3, human one-way = S1 counts 13, 12, 14, 13, 11
    expect(r.byBound).toHaveLength(10)
    expect(r.byBound[2]).toEqual({
      j: 3,
      oneWayHuman: { median: 13, min: 11, max: 14 },
      oneWayMachine: { median: 14, min: 12, max: 15 }, // S1+S2: 14, 14, 15, 15, 12 → median 14, min 12
    })
  })
})

describe('byBound', () => {
  it('is not monotone: a later REJECT removes a session that was one-way earlier', () => {
    // h RATIFIES at 2, m REFUTES at 3 (no mutual RATIFY), h REJECTS at 4 (k = 3)
    const c = countRepetition([summarize(session('INIT', 'RATIFY', 'REFUTE', 'REJECT'))])
    expect(c.byBound.map((b) => b.oneWayHuman)).toEqual([0, 1, 1, 0])
    expect(c.oneWay.human).toBe(0)
  })

  it('a repetition with shorter sessions keeps its last value at the longer bounds', () => {
    const a = countRepetition([summarize(S1())]) // length 3
    const b = countRepetition([summarize(S3())]) // length 5
    const r = aggregateRepetitions([a, b])
    expect(r.byBound).toHaveLength(5)
    expect(r.byBound[4]).toEqual({
      j: 5,
      oneWayHuman: { median: 1, min: 1, max: 1 },
      oneWayMachine: { median: 1, min: 1, max: 1 },
    })
    expect(r.byBound[2]!.oneWayMachine).toEqual({ median: 0.5, min: 0, max: 1 })
  })
})

// ---------------------------------------------------------------------------------------------
// Properties over random sessions. Tags are arbitrary (the definitions do not need a valid PXP run).

const arbSession = fc
  .array(fc.constantFrom(...PXP_TAGS), { minLength: 1, maxLength: 12 })
  .map((tags) => session(...tags))
const arbRepetition = fc.array(arbSession, { minLength: 0, maxLength: 12 })

describe('properties', () => {
  it('the streaming summary agrees with the definitions, in any message order and at every bound', () => {
    fc.assert(
      fc.property(
        arbSession.chain((s) => fc.tuple(fc.constant(s), fc.shuffledSubarray(s, { minLength: s.length }))),
        ([s, shuffled]) => {
          const summary = summarize(shuffled)
          expect(summaryIntelligibility(summary)).toEqual(sessionIntelligibility(s))
          for (let j = 0; j <= s.length + 1; j++)
            for (const a of ['h', 'm'] as const) expect(summaryOneWay(summary[a], j)).toBe(isOneWayAtBound(s, a, j))
        },
      ),
    )
  })

  it('per session: strong ⇒ one-way, ultra-strong ⇒ strong, two-way ⇔ one-way for both', () => {
    fc.assert(
      fc.property(arbSession, (s) => {
        const p = sessionIntelligibility(s)
        for (const a of ['h', 'm'] as const) {
          if (p.strong[a]) expect(p.oneWay[a]).toBe(true)
          if (p.ultraStrong[a]) expect(p.strong[a]).toBe(true)
        }
        expect(p.twoWay).toBe(p.oneWay.h && p.oneWay.m)
      }),
    )
  })

  it('counts: two-way ≤ min(one-way h, one-way m), ultra-strong ≤ strong ≤ one-way, byBound at the full length = one-way', () => {
    fc.assert(
      fc.property(arbRepetition, (rep) => {
        const c = countRepetition(rep.map(summarize))
        expect(c.twoWay).toBeLessThanOrEqual(Math.min(c.oneWay.human, c.oneWay.machine))
        expect(c.ultraStrong.human).toBeLessThanOrEqual(c.strong.human)
        expect(c.ultraStrong.machine).toBeLessThanOrEqual(c.strong.machine)
        expect(c.strong.human).toBeLessThanOrEqual(c.oneWay.human)
        expect(c.strong.machine).toBeLessThanOrEqual(c.oneWay.machine)
        const longest = Math.max(0, ...rep.map((s) => s.length))
        expect(c.byBound).toHaveLength(longest)
        const last = c.byBound.at(-1)
        if (last) expect([last.oneWayHuman, last.oneWayMachine]).toEqual([c.oneWay.human, c.oneWay.machine])
        // and by brute force at every bound
        for (const b of c.byBound) {
          expect(b.oneWayHuman).toBe(rep.filter((s) => isOneWayAtBound(s, 'h', b.j)).length)
          expect(b.oneWayMachine).toBe(rep.filter((s) => isOneWayAtBound(s, 'm', b.j)).length)
        }
      }),
    )
  })

  it('byBound is monotone in j when no session has a REJECT', () => {
    const noReject = fc
      .array(fc.constantFrom<PxpTag>('INIT', 'RATIFY', 'REFUTE', 'REVISE'), { minLength: 1, maxLength: 12 })
      .map((tags) => session(...tags))
    fc.assert(
      fc.property(fc.array(noReject, { maxLength: 12 }), (rep) => {
        const b = countRepetition(rep.map(summarize)).byBound
        for (let i = 1; i < b.length; i++) {
          expect(b[i]!.oneWayHuman).toBeGreaterThanOrEqual(b[i - 1]!.oneWayHuman)
          expect(b[i]!.oneWayMachine).toBeGreaterThanOrEqual(b[i - 1]!.oneWayMachine)
        }
      }),
    )
  })

  it('aggregation: min ≤ median ≤ max; one repetition gives median = min = max = its count', () => {
    fc.assert(
      fc.property(fc.array(arbRepetition, { minLength: 1, maxLength: 6 }), (reps) => {
        const r = intelligibilityReport(reps)
        const counts = reps.map((rep) => countRepetition(rep.map(summarize)))
        for (const s of [r.twoWay, r.oneWay.human, r.strong.machine, r.ultraStrong.human]) {
          expect(s.min).toBeLessThanOrEqual(s.median)
          expect(s.median).toBeLessThanOrEqual(s.max)
        }
        expect(r.twoWay.min).toBe(Math.min(...counts.map((c) => c.twoWay)))
        expect(r.twoWay.max).toBe(Math.max(...counts.map((c) => c.twoWay)))
        if (reps.length === 1) expect(r.oneWay.machine).toEqual(constant(counts[0]!.oneWay.machine))
        expect(r.repetitions).toBe(reps.length)
      }),
    )
  })
})
