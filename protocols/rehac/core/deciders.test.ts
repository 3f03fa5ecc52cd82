import { describe, expect, it } from 'vitest'
import {
  agentOnly,
  decideFromHttpResponse,
  decideFromP,
  decisionRule,
  httpPolicyRequest,
  httpPolicyResponse,
  httpRequestFor,
  humanOnly,
  policyDecider,
  randomDecider,
  stepIndexOf,
  stepUniform,
} from './deciders'
import { DENSE_SIZE, type PolicyModel } from './policy'

const at = { episodeKey: 'run1/q7/0', t: 2 }
const state = 'Question: Q?\n<solver> agent\nThought 1: x\nAction 1: Search[y]\nObservation 1: z\n<solver>'

describe('decision rule from p(human)', () => {
  it('p = 1 always gives human and p = 0 always agent, under every rule and seed', () => {
    for (let seed = 0; seed < 50; seed++)
      for (const rule of [
        { kind: 'argmax' as const },
        { kind: 'threshold' as const, value: 0.3 },
        { kind: 'sample' as const, seed },
      ]) {
        expect(decideFromP(1, rule, { episodeKey: `e${seed}`, t: seed % 5 }).solver).toBe('human')
        expect(decideFromP(0, rule, { episodeKey: `e${seed}`, t: seed % 5 }).solver).toBe('agent')
      }
  })
  it('argmax: human iff p > 0.5 (a tie goes to the agent); threshold: human iff p ≥ value', () => {
    expect(decideFromP(0.5, { kind: 'argmax' }, at)).toEqual({ solver: 'agent', pHuman: 0.5 })
    expect(decideFromP(0.51, { kind: 'argmax' }, at).solver).toBe('human')
    expect(decideFromP(0.3, { kind: 'threshold', value: 0.3 }, at).solver).toBe('human')
    expect(decideFromP(0.29, { kind: 'threshold', value: 0.3 }, at).solver).toBe('agent')
  })
  it('refuses p outside [0, 1] and malformed rules', () => {
    expect(() => decideFromP(1.2, { kind: 'argmax' }, at)).toThrow(/\[0, 1\]/)
    expect(() => decideFromP(Number.NaN, { kind: 'argmax' }, at)).toThrow()
    expect(decisionRule.safeParse({ kind: 'threshold', value: 2 }).success).toBe(false)
    expect(decisionRule.safeParse({ kind: 'sample' }).success).toBe(false)
  })
})

describe('baseline deciders', () => {
  it('agent-only and human-only', () => {
    expect(agentOnly({ state, t: 1, episodeKey: 'a' })).toEqual({ solver: 'agent', pHuman: 0 })
    expect(humanOnly({ state, t: 1, episodeKey: 'a' })).toEqual({ solver: 'human', pHuman: 1 })
  })
  it('random: about half human over 20 000 steps, reproducible per (seed, episode, t), different across seeds', () => {
    const run = (seed: number) => {
      const d = randomDecider(seed)
      const out: string[] = []
      for (let e = 0; e < 4000; e++) for (let t = 1; t <= 5; t++) out.push(d({ state, t, episodeKey: `q${e}` }).solver)
      return out
    }
    const a = run(42)
    const humans = a.filter((s) => s === 'human').length
    // Binomial(20000, 0.5): sd ≈ 71, so ±500 is > 7 sd.
    expect(Math.abs(humans - 10000)).toBeLessThan(500)
    expect(run(42)).toEqual(a)
    const b = run(43)
    const same = a.filter((s, i) => s === b[i]).length
    expect(Math.abs(same - 10000)).toBeLessThan(500)
    // Order does not matter: one step decided alone gives the same answer as inside the loop.
    expect(randomDecider(42)({ state, t: 3, episodeKey: 'q17' }).solver).toBe(a[17 * 5 + 2])
  })
  it('the hashed uniform is in [0, 1) and spread over its range', () => {
    const u = Array.from({ length: 1000 }, (_, i) => stepUniform(1, 'ep', i))
    expect(Math.min(...u)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...u)).toBeLessThan(1)
    const low = u.filter((x) => x < 0.1).length
    expect(low).toBeGreaterThan(60)
    expect(low).toBeLessThan(140)
  })
})

describe('trained-policy decider', () => {
  // A hand-set model: only the bias is non-zero, so p(human) = σ(bias) for every state.
  const model = (bias: number): PolicyModel => ({
    kind: 'rehac-logistic',
    version: 1,
    features: { hashDim: 16, lastSteps: 1, questionTokens: false, bigrams: true },
    bias,
    weights: new Array(DENSE_SIZE + 16).fill(0),
  })
  it('argmax by default, threshold and sample on request, and records p(human)', () => {
    const d = policyDecider(model(Math.log(0.3 / 0.7)))
    const dec = d({ state, t: 2, episodeKey: 'e' })
    expect(dec.solver).toBe('agent')
    expect(dec.pHuman).toBeCloseTo(0.3, 12)
    expect(
      policyDecider(model(Math.log(0.3 / 0.7)), { kind: 'threshold', value: 0.25 })({ state, t: 2, episodeKey: 'e' })
        .solver,
    ).toBe('human')
    const sampler = policyDecider(model(Math.log(0.3 / 0.7)), { kind: 'sample', seed: 9 })
    let humans = 0
    for (let e = 0; e < 5000; e++) if (sampler({ state, t: 2, episodeKey: `e${e}` }).solver === 'human') humans++
    // Binomial(5000, 0.3): sd ≈ 32.
    expect(Math.abs(humans - 1500)).toBeLessThan(200)
  })
  it('reads t from a state: finished steps + 1', () => {
    expect(stepIndexOf(state)).toBe(2)
    expect(stepIndexOf('Question: Q?\n<solver>')).toBe(1)
  })
})

describe('HTTP policy contract', () => {
  it('validates the request and the response', () => {
    expect(httpRequestFor({ state, t: 2, episodeKey: 'e' }, 'Q?')).toEqual({ state, t: 2, question: 'Q?' })
    expect(httpPolicyRequest.safeParse({ state, t: 0 }).success).toBe(false)
    expect(httpPolicyResponse.safeParse({ pHuman: 0.7, pAgent: 0.3 }).success).toBe(true)
    expect(httpPolicyResponse.safeParse({ pHuman: 1.01 }).success).toBe(false)
    expect(httpPolicyResponse.safeParse({ p_human: 0.5 }).success).toBe(false)
  })
  it('decides with the same rule as the trained policy and refuses a malformed answer', () => {
    expect(decideFromHttpResponse({ pHuman: 0.8 }, { kind: 'argmax' }, at)).toEqual({ solver: 'human', pHuman: 0.8 })
    expect(decideFromHttpResponse({ pHuman: 0 }, { kind: 'sample', seed: 1 }, at).solver).toBe('agent')
    expect(() => decideFromHttpResponse({ pHuman: '0.8' }, { kind: 'argmax' }, at)).toThrow(/refused/)
    expect(() => decideFromHttpResponse(null, { kind: 'argmax' }, at)).toThrow(/refused/)
  })
})
