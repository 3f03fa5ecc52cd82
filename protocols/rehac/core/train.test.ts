import { describe, expect, it } from 'vitest'
import { questionOf, TrainDataError, trainOnTrajectories } from './train'

/** One-step trees: on Qi the agent's answer scores `agent`, the human's `human`. */
const tree = (q: string, agent: number, human: number) => [
  { trajectory: `Question: ${q}\n<solver> agent\nThought 1: t\nAction 1: Finish[a]\nObservation 1: done\n`, f1: agent },
  { trajectory: `Question: ${q}\n<solver> human\nThought 1: t\nAction 1: Finish[b]\nObservation 1: done\n`, f1: human },
]

describe('training on trajectories (core/train.ts)', () => {
  it('holds out whole questions by seed; the baselines are the held-out advantages of each action', () => {
    const episodes = [...tree('Q1', 1, 0), ...tree('Q2', 0, 1), ...tree('Q3', 1, 0), ...tree('Q4', 0.5, 0.5)]
    const r = trainOnTrajectories(episodes, { lambda: 0.1, epochs: 3, seed: 5, heldOutFraction: 0.25 })
    expect(r.data).toMatchObject({ trajectories: 8, rows: 8, trainQuestions: 3, heldOutQuestions: 1 })
    expect(r.data.trainRows + r.data.heldOutRows).toBe(8)
    const held = r.heldOut
    if (!held) throw new Error('nothing held out')
    // One held-out state: A(agent) = (T_agent − (T_human − λ)) / 2 and A(human) = −A(agent).
    const a = held.agentOnly.meanChosenAdvantage
    expect([(1 - (0 - 0.1)) / 2, (0 - (1 - 0.1)) / 2, (0.5 - (0.5 - 0.1)) / 2].map((x) => x.toFixed(12))).toContain(
      a.toFixed(12),
    )
    expect(held.humanOnly.meanChosenAdvantage).toBeCloseTo(-a, 12)
    expect(held.agentOnly.stateAccuracy).toBe(a > 0 ? 1 : 0)
    // Deterministic for a seed; another seed may hold out another question.
    expect(trainOnTrajectories(episodes, { lambda: 0.1, epochs: 3, seed: 5, heldOutFraction: 0.25 })).toEqual(r)
    const heldKeys = new Set(
      [1, 2, 3, 4, 5, 6].map(
        (seed) =>
          trainOnTrajectories(episodes, { epochs: 1, seed, heldOutFraction: 0.25 }).heldOut?.agentOnly
            .meanChosenAdvantage,
      ),
    )
    expect(heldKeys.size).toBeGreaterThan(1)
  })

  it('holds nothing out at 0 or with one question; no state with both actions is a TrainDataError', () => {
    const one = trainOnTrajectories(tree('Q1', 1, 0), { heldOutFraction: 0.5, epochs: 1 })
    expect(one.heldOut).toBeNull()
    expect(one.data).toMatchObject({ trainQuestions: 1, heldOutQuestions: 0, trainRows: 2 })
    const zero = trainOnTrajectories([...tree('Q1', 1, 0), ...tree('Q2', 0, 1)], { heldOutFraction: 0, epochs: 1 })
    expect(zero.heldOut).toBeNull()
    expect(() => trainOnTrajectories(tree('Q1', 1, 0).slice(0, 1), {})).toThrow(TrainDataError)
    expect(() => trainOnTrajectories(tree('Q1', 1, 0), { lambda: 2 })).toThrow()
    expect(questionOf({ state: 'Question: Q1\n<solver> agent\n…<solver>' })).toBe('Question: Q1\n')
  })
})
