import { describe, expect, it } from 'vitest'
import {
  accuracy,
  clemTable,
  cohenKappa,
  mainScore,
  middleRound,
  type PrivateSharedEpisode,
  pandasMean,
  privateSharedScores,
  roundHalfEven,
  scoresJson,
  truncatedKappa,
} from './clemscore'

const rep = <T>(x: T, n: number): T[] => Array.from({ length: n }, () => x)

describe("Cohen's kappa as sklearn computes it", () => {
  // Each value is worked out by hand: κ = (p_o − p_e)/(1 − p_e), p_e = Σ_k P(gold=k)·P(pred=k).
  it.each([
    // p_o = 3/4; gold 2/2, pred 1/3 → p_e = (2·1 + 2·3)/16 = 1/2 → κ = (3/4 − 1/2)/(1/2) = 1/2
    { y1: [0, 1, 0, 1], y2: [0, 1, 1, 1], kappa: 0.5 },
    // complete disagreement on two labels: p_o = 0, p_e = 1/2 → −1
    { y1: [0, 1], y2: [1, 0], kappa: -1 },
    // complete agreement with both labels: p_o = 1 → 1
    { y1: [0, 1, 1, 0], y2: [0, 1, 1, 0], kappa: 1 },
    // constant gold, one different prediction: p_o = 3/4, p_e = 1·3/4 → 0
    { y1: [0, 0, 0, 0], y2: [0, 1, 0, 0], kappa: 0 },
    // sklearn's own test vectors, by hand: p_o = .7, p_e = .4·.3 + .6·.7 = .54 → .16/.46
    {
      y1: [...rep(0, 40), ...rep(1, 60)],
      y2: [...rep(0, 20), ...rep(1, 20), ...rep(0, 10), ...rep(1, 50)],
      kappa: 0.16 / 0.46,
    },
    // three labels: p_o = .88, p_e = .46·.52 + .44·.32 + .10·.16 = .396 → .484/.604 (sklearn: 0.8013)
    {
      y1: [...rep(0, 46), ...rep(1, 44), ...rep(2, 10)],
      y2: [...rep(0, 52), ...rep(1, 32), ...rep(2, 16)],
      kappa: 0.484 / 0.604,
    },
  ])('κ($y1, $y2) = $kappa', ({ y1, y2, kappa }) => {
    expect(cohenKappa(y1, y2)).toBeCloseTo(kappa, 12)
    expect(cohenKappa(y2, y1)).toBeCloseTo(kappa, 12) // symmetric
  })

  it('is computed as sklearn does (1 − observed/expected disagreement), to the last bit', () => {
    // [0,1,0,1] vs [0,1,1,1]: disagreement 1, expected off-diagonal 0.5 + 1.5 = 2 → 1 − 1/2, exactly
    expect(cohenKappa([0, 1, 0, 1], [0, 1, 1, 1])).toBe(0.5)
    // [0,0,1,1,1] vs [0,1,1,1,0]: disagreement 2; column sums [2,3], row sums [2,3];
    // expected off-diagonal 2·3/5 + 3·2/5 = 1.2 + 1.2 = 2.4 → 1 − 2/2.4 (one division in floating point)
    expect(cohenKappa([0, 0, 1, 1, 1], [0, 1, 1, 1, 0])).toBe(1 - 2 / (1.2 + 1.2))
  })

  it('is NaN when the expected agreement is 1 (one label used by both), as sklearn (0/0)', () => {
    expect(cohenKappa([1, 1, 1], [1, 1, 1])).toBeNaN()
    expect(cohenKappa([0], [0])).toBeNaN()
    expect(cohenKappa([], [])).toBeNaN()
  })

  it('refuses vectors of different lengths', () => {
    expect(() => cohenKappa([0, 1], [0])).toThrow(/2 and 1/)
  })

  it('truncation is max(0, κ), NaN giving 0 as in Python', () => {
    expect(truncatedKappa(0.4)).toBe(0.4)
    expect(truncatedKappa(-0.2)).toBe(0)
    expect(truncatedKappa(Number.NaN)).toBe(0)
  })
})

describe('accuracy and the main score', () => {
  it('accuracy is the share of equal pairs', () => {
    expect(accuracy([0, 1, 1, 0], [0, 1, 0, 0])).toBe(0.75)
    expect(accuracy([], [])).toBeNaN()
  })

  it('main score is the harmonic mean × 100, 0 when both are 0, NaN when either is NaN', () => {
    expect(mainScore(1, 1)).toBe(100)
    // 2·0.5·1/(1.5) = 2/3
    expect(mainScore(0.5, 1)).toBeCloseTo(200 / 3, 12)
    expect(mainScore(1, 0)).toBe(0)
    expect(mainScore(0, 0)).toBe(0)
    expect(mainScore(Number.NaN, 1)).toBeNaN()
    expect(mainScore(1, Number.NaN)).toBeNaN()
  })

  it('the middle probing round is int((n + 1)/2) − 1', () => {
    expect([5, 10, 15].map(middleRound)).toEqual([2, 4, 7])
  })
})

/** An episode of the 2-slot game (3 probing rounds) with the given probes per round. */
const episode = (over: Partial<PrivateSharedEpisode>): PrivateSharedEpisode => ({
  slots: 2,
  aborted: false,
  playedProbeRounds: 3,
  probes: [
    [
      { gt: 0, value: 0 },
      { gt: 0, value: 0 },
    ],
    [
      { gt: 1, value: 1 },
      { gt: 0, value: 1 },
    ],
    [
      { gt: 1, value: 1 },
      { gt: 1, value: 1 },
    ],
  ],
  filledSlots: [true, false],
  requestCounts: [2, 3, 3],
  parsedRequestCounts: [2, 3, 2],
  violatedRequestCounts: [0, 0, 1],
  ...over,
})

describe("the scorer's turn and episode scores (clembench key names)", () => {
  it('scores a finished episode', () => {
    // gold 0 0 1 0 1 1, pred 0 0 1 1 1 1: p_o = 5/6; gold 3/3, pred 2/4 → p_e = (3·2 + 3·4)/36 = 1/2
    // κ = (5/6 − 1/2)/(1/2) = 2/3; SF = 1/2; main = 100·2·(1/2)(2/3)/(1/2 + 2/3) = 100·(2/3)/(7/6) = 400/7
    const s = privateSharedScores(episode({}))
    expect(s.turns).toEqual([
      { 'Request Count': 2, 'Parsed Request Count': 2, 'Violated Request Count': 0, Accuracy: 1 },
      { 'Request Count': 3, 'Parsed Request Count': 3, 'Violated Request Count': 0, Accuracy: 0.5, 'Slot Filled?': 1 },
      { 'Request Count': 3, 'Parsed Request Count': 2, 'Violated Request Count': 1, Accuracy: 1, 'Slot Filled?': 0 },
    ])
    const e = s.episode
    expect(Object.keys(e)).toEqual([
      'Middle-Accuracy',
      'Accuracy',
      'Kappa',
      'Truncated Kappa',
      'Slot-Filling-Accuracy',
      'Main Score',
      'Aborted',
      'Lose',
      'Success',
      'Request Count',
      'Parsed Request Count',
      'Violated Request Count',
      'Request Success Ratio',
    ])
    expect(e['Middle-Accuracy']).toBe(1) // n = 2 → round int(3/2) − 1 = 0, all right
    expect(e.Accuracy).toBeCloseTo(5 / 6, 12)
    expect(e.Kappa).toBeCloseTo(2 / 3, 12)
    expect(e['Truncated Kappa']).toBeCloseTo(2 / 3, 12)
    expect(e['Slot-Filling-Accuracy']).toBe(0.5)
    expect(e['Main Score']).toBeCloseTo(400 / 7, 10)
    expect([e.Aborted, e.Lose, e.Success]).toEqual([0, 1, 0])
    expect([e['Request Count'], e['Parsed Request Count'], e['Violated Request Count']]).toEqual([8, 7, 1])
    expect(e['Request Success Ratio']).toBe(7 / 8)
  })

  it('an aborted episode: turn scores for the played rounds, NaN episode scores, Lose = Success = 0', () => {
    const s = privateSharedScores(episode({ aborted: true, playedProbeRounds: 1 }))
    expect(s.turns).toHaveLength(1)
    const e = s.episode
    for (const k of ['Middle-Accuracy', 'Accuracy', 'Kappa', 'Truncated Kappa', 'Slot-Filling-Accuracy', 'Main Score'])
      expect(e[k as keyof typeof e]).toBeNaN()
    expect([e.Aborted, e.Lose, e.Success]).toEqual([1, 0, 0])
    expect(e['Request Count']).toBe(8) // every round's counters, the unplayed ones too
  })

  it('Middle-Accuracy only when the middle round was played', () => {
    const s = privateSharedScores(episode({ slots: 5, aborted: true, playedProbeRounds: 2 }))
    expect('Middle-Accuracy' in s.episode).toBe(false)
  })

  it('scores.json writes NaN as null under "turn scores" and "episode scores"', () => {
    const j = scoresJson(episode({ aborted: true, playedProbeRounds: 2 }))
    expect(Object.keys(j)).toEqual(['turn scores', 'episode scores'])
    expect(Object.keys(j['turn scores'])).toEqual(['0', '1'])
    expect(j['episode scores']['Main Score']).toBeNull()
    expect(j['episode scores'].Kappa).toBeNull()
    expect(JSON.parse(JSON.stringify(j))).toEqual(j)
  })
})

describe('clemeval: % Played, Quality Score, clemscore', () => {
  it('CS-1: game A [100, 50, aborted, 60], game B [0, 20] → 75/70, 100/10, clemscore 35', () => {
    const eps = [
      ...[100, 50, null, 60].map((m) => ({ game: 'A', model: 'm', aborted: m === null, mainScore: m })),
      ...[0, 20].map((m) => ({ game: 'B', model: 'm', aborted: 0, mainScore: m })),
    ]
    expect(clemTable(eps)).toEqual([
      {
        model: 'm',
        clemscore: 35,
        averagePlayed: 87.5,
        averageQuality: 40,
        games: [
          { game: 'A', played: 75, quality: 70 },
          { game: 'B', played: 100, quality: 10 },
        ],
      },
    ])
  })

  it('rounds each step to 2 decimals as numpy (ties to even on the binary value) and skips NaN games', () => {
    // A: 1 of 3 played → 33.333… → 33.33 %; quality 12.345: 12.345·100 is 1234.5 in floating point,
    // a tie, rounded to the even 1234 → 12.34
    // B: all aborted → quality NaN, skipped by the mean over games; played 0
    const eps = [
      { game: 'A', model: 'x', aborted: 0, mainScore: 12.345 },
      { game: 'A', model: 'x', aborted: 1, mainScore: Number.NaN },
      { game: 'A', model: 'x', aborted: 1, mainScore: null },
      { game: 'B', model: 'x', aborted: 1, mainScore: null },
    ]
    const [row] = clemTable(eps)
    expect(row!.games).toEqual([
      { game: 'A', played: 33.33, quality: 12.34 },
      { game: 'B', played: 0, quality: Number.NaN },
    ])
    expect(row!.averagePlayed).toBe(16.66) // (33.33 + 0)/2 = 16.665; ·100 = 1666.5, a tie → 1666 → 16.66
    expect(row!.averageQuality).toBe(12.34)
    expect(row!.clemscore).toBe(2.06) // 0.1666 · 12.34 = 2.055844 → 2.06
  })

  it('numpy rounding and pandas means', () => {
    expect(roundHalfEven(0.125)).toBe(0.12) // 12.5 → 12 (even)
    expect(roundHalfEven(0.135)).toBe(0.14) // 13.5 → 14
    expect(roundHalfEven(2.675)).toBe(2.68) // 2.675·100 is 267.5 in floating point → 268
    expect(roundHalfEven(-2.5, 0)).toBe(-2)
    expect(pandasMean([1, Number.NaN, 2])).toBe(1.5)
    expect(pandasMean([Number.NaN])).toBeNaN()
  })
})
