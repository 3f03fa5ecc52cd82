import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'
import { advantageTables } from './advantages'
import { parseJsonl } from './trajectory'
import {
  type AdvantageRow,
  DENSE_SIZE,
  type EncodedRow,
  type Evaluation,
  encodeRows,
  evaluate,
  evaluateP,
  featureConfig,
  featurize,
  lossAndGradient,
  mulberry32,
  parseModel,
  parseState,
  pHuman,
  rowSurrogate,
  serialiseModel,
  splitByKey,
  trainPolicy,
} from './policy'

const P = { epsilon: 0.3, alpha: 0, behaviourProb: 0.5 }
const logitOf = (p: number) => Math.log(p / (1 - p))

describe('clipped surrogate min(r·A, clip(r, 0.7, 1.3)·A), π_beh = 0.5', () => {
  it('A > 0, r inside the clip range: human, p = 0.6 → r = 0.6/0.5 = 1.2, value 1.2·0.1 = 0.12', () => {
    const s = rowSurrogate(logitOf(0.6), 1, 0.1, P)
    expect(s.ratio).toBeCloseTo(1.2, 12)
    expect(s.value).toBeCloseTo(0.12, 12)
    // slope in z: A·p(1−p)/π_beh = 0.1·0.24/0.5 = 0.048
    expect(s.dz).toBeCloseTo(0.048, 12)
  })
  it('A > 0, r above: p = 0.8 → r = 1.6, min(0.16, 1.3·0.1 = 0.13) = 0.13, flat (slope 0)', () => {
    const s = rowSurrogate(logitOf(0.8), 1, 0.1, P)
    expect(s.value).toBeCloseTo(0.13, 12)
    expect(s.dz).toBe(0)
  })
  it('A > 0, r below: p = 0.2 → r = 0.4, min(0.04, 0.7·0.1 = 0.07) = 0.04, slope 0.1·0.16/0.5 = 0.032', () => {
    const s = rowSurrogate(logitOf(0.2), 1, 0.1, P)
    expect(s.value).toBeCloseTo(0.04, 12)
    expect(s.dz).toBeCloseTo(0.032, 12)
  })
  it('A < 0, r above: p = 0.8 → r = 1.6, min(−0.16, −0.13) = −0.16, slope −0.1·0.16/0.5 = −0.032', () => {
    const s = rowSurrogate(logitOf(0.8), 1, -0.1, P)
    expect(s.value).toBeCloseTo(-0.16, 12)
    expect(s.dz).toBeCloseTo(-0.032, 12)
  })
  it('A < 0, r below: agent row, p_human = 0.8 → π(agent) = 0.2, r = 0.4, min(−0.04, −0.07) = −0.07, flat', () => {
    const s = rowSurrogate(logitOf(0.8), 0, -0.1, P)
    expect(s.ratio).toBeCloseTo(0.4, 12)
    expect(s.value).toBeCloseTo(-0.07, 12)
    expect(s.dz).toBe(0)
  })
  it('A < 0, r inside: agent row, p_human = 0.4 → r = 1.2, value −0.12, slope −0.1·(−0.24)/0.5 = +0.048', () => {
    const s = rowSurrogate(logitOf(0.4), 0, -0.1, P)
    expect(s.value).toBeCloseTo(-0.12, 12)
    expect(s.dz).toBeCloseTo(0.048, 12)
  })
  it('entropy bonus: p = 0.5, α = 0.1, A = 0.2 → 1·0.2 + 0.1·ln 2 = 0.2693147; slope 0.2·0.25/0.5 + 0 = 0.1', () => {
    const s = rowSurrogate(0, 1, 0.2, { ...P, alpha: 0.1 })
    expect(s.entropy).toBeCloseTo(Math.LN2, 12)
    expect(s.value).toBeCloseTo(0.2693147, 6)
    expect(s.dz).toBeCloseTo(0.1, 12)
  })
  it('entropy stays finite at extreme logits', () => {
    const s = rowSurrogate(800, 1, 0.1, { ...P, alpha: 0.1 })
    expect(Number.isFinite(s.value)).toBe(true)
    expect(s.entropy).toBeCloseTo(0, 10)
  })
})

describe('analytic gradient', () => {
  it('matches central finite differences of the loss (−J̃ + L2) on every touched weight and the bias', () => {
    const config = featureConfig.parse({ hashDim: 64 })
    const rand = mulberry32(3)
    const words = ['search', 'lookup', 'paris', 'river', 'king', 'height', 'unknown', 'finish']
    const rows: AdvantageRow[] = []
    for (let i = 0; i < 12; i++) {
      const w = () => words[Math.floor(rand() * words.length)]
      const state = `Question: q${i}?\n<solver> agent\nThought 1: ${w()} ${w()} ${w()}\nAction 1: Search[${w()}]\nObservation 1: ${w()} ${w()}.\n<solver>`
      const a = (rand() - 0.5) * 0.4
      rows.push({ state, action: 1, reward: a, count: 1 + Math.floor(rand() * 4) })
      rows.push({ state, action: 0, reward: -a, count: 1 + Math.floor(rand() * 4) })
    }
    const enc: EncodedRow[] = encodeRows(rows, config)
    const weights = Array.from({ length: DENSE_SIZE + 64 }, () => (rand() - 0.5) * 4)
    const bias = 0.2
    const params = { epsilon: 0.3, alpha: 0.1, behaviourProb: 0.5, l2: 0.01 }
    const { grad, gradBias } = lossAndGradient(weights, bias, enc, params)
    const h = 1e-6
    let checked = 0
    let clippedSomewhere = 0
    let unclipped = 0
    for (const r of enc) {
      const z = r.x.idx.reduce((s, j, k) => s + weights[j]! * r.x.val[k]!, bias)
      const { ratio } = rowSurrogate(z, r.action, r.A, params)
      if ((r.A > 0 && ratio > 1.3) || (r.A < 0 && ratio < 0.7)) clippedSomewhere++
      else unclipped++
    }
    for (let j = 0; j < weights.length; j++) {
      const up = [...weights]
      const down = [...weights]
      up[j]! += h
      down[j]! -= h
      const fd = (lossAndGradient(up, bias, enc, params).loss - lossAndGradient(down, bias, enc, params).loss) / (2 * h)
      expect(grad[j]!).toBeCloseTo(fd, 6)
      checked++
    }
    const fdb =
      (lossAndGradient(weights, bias + h, enc, params).loss - lossAndGradient(weights, bias - h, enc, params).loss) /
      (2 * h)
    expect(gradBias).toBeCloseTo(fdb, 6)
    expect(checked).toBe(DENSE_SIZE + 64)
    // The weights are large enough that some rows sit in the flat (clipped) branch: both branches are covered.
    expect(clippedSomewhere).toBeGreaterThan(0)
    expect(unclipped).toBeGreaterThan(0)
  })
})

describe('features', () => {
  const state =
    'Question: Is the Nile longer than the Amazon?\n<solver> agent\nThought 1: I need the lengths.\nAction 1: Search[Nile]\nObservation 1: The Nile is 6650 km long.\n<solver> human\nThought 2: Compare.\nAction 2: Lookup[length]\nObservation 2: No more results.\n<solver>'
  it('parses question, solvers and step texts without the markers', () => {
    const p = parseState(state)
    expect(p.question).toBe('Is the Nile longer than the Amazon?')
    expect(p.solvers).toEqual(['agent', 'human'])
    expect(p.steps[1]).toBe('Thought 2: Compare.\nAction 2: Lookup[length]\nObservation 2: No more results.')
  })
  it('sets one slot per dense group (t = 2, 1 human, 1 agent, last = human, Lookup, length bucket) and a unit hashed block', () => {
    const x = featurize(state, featureConfig.parse({}))
    const dense = Array.from(x.idx.filter((i) => i < DENSE_SIZE))
    // t=2 → 2; humans=1 → 10+1; agents=1 → 16+1; last solver human → 22+2; Lookup → 25+2;
    // last step is 73 chars → floor(log2(74)) = 6 → 30+6.
    expect(dense).toEqual([2, 11, 17, 24, 27, 36])
    let sq = 0
    x.idx.forEach((i, k) => {
      if (i >= DENSE_SIZE) sq += x.val[k]! ** 2
    })
    expect(sq).toBeCloseTo(1, 12)
  })
})

/** Synthetic rows: the word "tricky" in the last step makes the human the better choice. */
function synthetic(n: number, seed: number): { rows: AdvantageRow[]; key: (r: AdvantageRow) => string } {
  const rand = mulberry32(seed)
  const filler = ['river', 'city', 'king', 'born', 'film', 'album', 'year', 'team', 'song', 'war', 'list', 'state']
  const rows: AdvantageRow[] = []
  for (let q = 0; q < n; q++) {
    const tricky = rand() < 0.5
    const noise = Array.from({ length: 6 }, () => filler[Math.floor(rand() * filler.length)]).join(' ')
    const state = `Question: synthetic question ${q}?\n<solver> agent\nThought 1: ${tricky ? 'this is tricky' : 'this is plain'} ${noise}\nAction 1: Search[${noise.split(' ')[0]}]\nObservation 1: ${noise}.\n<solver>`
    const a = 0.05 + rand() * 0.2
    rows.push({ state, action: 1, reward: tricky ? a : -a, count: 1 + Math.floor(rand() * 3) })
    rows.push({ state, action: 0, reward: tricky ? -a : a, count: 1 + Math.floor(rand() * 3) })
  }
  return { rows, key: (r) => /question (\d+)/.exec(r.state)![1]! }
}

describe('training', () => {
  const { rows, key } = synthetic(300, 11)
  const split = splitByKey(rows, key, { testFraction: 0.3, seed: 5 })

  it('holds out whole questions', () => {
    const trainKeys = new Set(split.train.map(key))
    expect(split.test.length).toBeGreaterThan(0)
    expect(split.test.every((r) => !trainKeys.has(key(r)))).toBe(true)
    expect(split.testKeys).toHaveLength(90)
    expect(splitByKey(rows, key, { testFraction: 0.3, seed: 5 }).testKeys).toEqual(split.testKeys)
  })

  it('learns the deciding feature: held-out weighted accuracy ≥ 0.95, and the loss falls', () => {
    const { model, history } = trainPolicy(split.train, { epochs: 15, seed: 1 })
    const ev = evaluate(model, split.test)
    expect(ev.weightedAccuracy).toBeGreaterThanOrEqual(0.95)
    expect(ev.stateAccuracy).toBeGreaterThanOrEqual(0.95)
    const agentOnly = evaluateP(() => 0, split.test)
    expect(ev.meanChosenAdvantage).toBeGreaterThan(agentOnly.meanChosenAdvantage)
    expect(history).toHaveLength(15)
    expect(history.at(-1)!.loss).toBeLessThan(history[0]!.loss)
    const tricky = split.test.find((r) => r.state.includes('tricky'))!.state
    const plain = split.test.find((r) => r.state.includes('plain'))!.state
    expect(pHuman(model, tricky)).toBeGreaterThan(0.5)
    expect(pHuman(model, plain)).toBeLessThan(0.5)
  })

  it('plain SGD without count weights also learns it (held-out weighted accuracy ≥ 0.9)', () => {
    const { model } = trainPolicy(split.train, { epochs: 30, seed: 1, optimizer: 'sgd', lr: 2, weightByCount: false })
    expect(evaluate(model, split.test).weightedAccuracy).toBeGreaterThanOrEqual(0.9)
  })

  it('refuses malformed rows', () => {
    const bad = [{ state: 's', action: 2, reward: 0.1, count: 1 }] as unknown as AdvantageRow[]
    expect(() => trainPolicy(bad)).toThrow()
    expect(() => trainPolicy([{ state: 's', action: 1, reward: Number.NaN, count: 1 }])).toThrow()
  })

  it('is deterministic for a seed and differs across seeds', () => {
    const a = trainPolicy(split.train, { epochs: 3, seed: 7 })
    const b = trainPolicy(split.train, { epochs: 3, seed: 7 })
    const c = trainPolicy(split.train, { epochs: 3, seed: 8 })
    expect(b.model).toEqual(a.model)
    expect(b.history).toEqual(a.history)
    expect(c.model.weights).not.toEqual(a.model.weights)
  })

  it('serialises and parses the model with zod, refusing a wrong weight count or hashDim', () => {
    const { model } = trainPolicy(split.train.slice(0, 40), { epochs: 1, features: { hashDim: 32 } })
    const text = serialiseModel(model)
    const back = parseModel(text)
    expect(back).toEqual(model)
    expect(pHuman(back, split.test[0]!.state)).toBe(pHuman(model, split.test[0]!.state))
    expect(() => parseModel({ ...model, weights: model.weights.slice(1) })).toThrow(/DENSE_SIZE/)
    expect(() => parseModel({ ...model, features: { ...model.features, hashDim: 1 << 20 } })).toThrow()
  })
})

describe('evaluation', () => {
  it('scores hand-made rows: weighted accuracy, state accuracy, chosen advantage, surrogate', () => {
    const rows: AdvantageRow[] = [
      { state: 's1', action: 1, reward: 0.1, count: 2 },
      { state: 's1', action: 0, reward: -0.1, count: 1 },
      { state: 's2', action: 1, reward: -0.3, count: 1 },
      { state: 's2', action: 0, reward: 0.3, count: 1 },
    ]
    // A policy that always picks human (p = 1): right on s1 (weights 0.1·2 + 0.1·1 = 0.3), wrong on s2 (0.3 + 0.3).
    const e: Evaluation = evaluateP(() => 1, rows)
    expect(e.weightedAccuracy).toBeCloseTo(0.3 / 0.9, 12)
    expect(e.stateAccuracy).toBe(0.5)
    // chosen advantage: s1 → +0.1 with weight 3, s2 → −0.3 with weight 2 → (0.3 − 0.6)/5 = −0.06
    expect(e.meanChosenAdvantage).toBeCloseTo(-0.06, 12)
    // surrogate at p = 1: human rows r = 2 → min(0.2, 0.13)·2 = 0.26 and min(−0.6, −0.39) = −0.6;
    // agent rows r = 0 → min(0, −0.07)·1 = −0.07 and min(0, 0.21) = 0; sum −0.41 over counts 5.
    expect(e.meanSurrogate).toBeCloseTo(-0.41 / 5, 12)
    expect(e.humanRate).toBe(1)
  })
})

describeShared(
  'ReHAC policy on the released StrategyQA trajectories (held-out questions)',
  () => {
    // The rows advantages.ts builds (λ = 0.08); a state's question is its first line (the held-out key).
    let data: { rows: ReturnType<typeof advantageTables>['advantages']; questionOf: Map<string, string> }
    beforeAll(() => {
      const lines = parseJsonl(readFileSync(sharedDir('datasets', 'rehac', 'strategyqa.jsonl'), 'utf8'))
      const rows = advantageTables(lines, { lambda: 0.08 }).advantages
      data = { rows, questionOf: new Map(rows.map((r) => [r.state, r.state.split('\n', 1)[0] as string])) }
    })

    it('builds advantage rows where both actions were seen', () => {
      // 2169 states with both actions (λ = 0.08, whole-trajectory C), from 250 questions.
      expect(data.rows.length).toBe(4338)
      expect(new Set(data.questionOf.values()).size).toBeGreaterThan(200)
      // Hand check, idx 296 (file lines 1–4): at the root state the agent branch was taken once
      // (correct, no human step: return 1.0) and the human branch twice (correct with 1 and 2 human
      // steps: 1 − 0.08 = 0.92 and 1 − 0.16 = 0.84, mean 0.88); line 2's "WouldL" typo is another state.
      // A(human) = (0.88 − 1.0)/2 = −0.06, A(agent) = +0.06.
      const root = 'Question: Would it be safe to have a jackfruit thrown at your head?\n<solver>'
      const at = data.rows.filter((r) => r.state === root)
      expect(at.map((r) => [r.action, r.count])).toEqual([
        [0, 1],
        [1, 2],
      ])
      expect(at[1]!.reward).toBeCloseTo(-0.06, 12)
      expect(at[0]!.reward).toBeCloseTo(0.06, 12)
    })

    it('compares the trained policy with the best constant policy on three 30% question splits', () => {
      // Splits 1–3 and the default options were fixed before looking at the outcome; figures are in
      // the report. The margin is small and one split (3) is lost: this documents, not proves, a gain.
      const out: { split: number; model: Evaluation; agent: Evaluation; human: Evaluation }[] = []
      for (const seed of [1, 2, 3]) {
        const s = splitByKey(data.rows, (r) => String(data.questionOf.get(r.state)), { testFraction: 0.3, seed })
        const { model } = trainPolicy(s.train, { seed: 42 })
        out.push({
          split: seed,
          model: evaluate(model, s.test),
          agent: evaluateP(() => 0, s.test),
          human: evaluateP(() => 1, s.test),
        })
      }
      for (const o of out)
        console.log(
          `split ${o.split}: weighted acc model ${o.model.weightedAccuracy.toFixed(3)} agent-only ${o.agent.weightedAccuracy.toFixed(3)} human-only ${o.human.weightedAccuracy.toFixed(3)}; chosen A model ${o.model.meanChosenAdvantage.toFixed(4)} agent-only ${o.agent.meanChosenAdvantage.toFixed(4)}; human rate ${o.model.humanRate.toFixed(2)}`,
        )
      const mean = (f: (o: (typeof out)[number]) => number) => out.reduce((s, o) => s + f(o), 0) / out.length
      const model = mean((o) => o.model.weightedAccuracy)
      const bestConstant = mean((o) => Math.max(o.agent.weightedAccuracy, o.human.weightedAccuracy))
      console.log(`mean weighted accuracy: model ${model.toFixed(3)}, best constant ${bestConstant.toFixed(3)}`)
      expect(model).toBeGreaterThan(bestConstant)
      expect(mean((o) => o.model.meanChosenAdvantage)).toBeGreaterThan(mean((o) => o.agent.meanChosenAdvantage))
    })
  },
  'datasets/rehac',
)
