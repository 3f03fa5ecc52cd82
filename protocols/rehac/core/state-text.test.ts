import { describe, expect, it } from 'vitest'
import { type RehacMessage, rehac } from './protocol'
import { stateText, trajectoryText } from './state-text'
import { parseTrajectory, trajectoryPath } from './trajectory'

const instance = { id: 'q1', kind: 'qa' as const, question: 'Who designed it?', answer: 'Halvard Brenn' }

function play(messages: RehacMessage[]) {
  let s = rehac.init({}, instance)
  for (const m of messages) s = rehac.apply(s, m)
  return s
}

const log: RehacMessage[] = [
  { seq: 1, sender: 'decider', kind: 'decide', t: 1, solver: 'agent', pHuman: 0 },
  {
    seq: 2,
    sender: 'agent',
    kind: 'step',
    t: 1,
    thought: 'Search it.',
    action: { type: 'search', arg: 'Calder Lighthouse' },
    suggestion: null,
    ms: null,
  },
  {
    seq: 3,
    sender: 'environment',
    kind: 'observation',
    t: 1,
    text: 'It was designed by Halvard Brenn.',
    finished: false,
  },
  { seq: 4, sender: 'decider', kind: 'decide', t: 2, solver: 'human', pHuman: null },
  {
    seq: 5,
    sender: 'human',
    kind: 'step',
    t: 2,
    thought: 'Done.',
    action: { type: 'finish', arg: 'Halvard Brenn' },
    suggestion: 'copied',
    ms: 1200,
  },
  { seq: 6, sender: 'environment', kind: 'observation', t: 2, text: 'Episode finished, reward = 1', finished: true },
]

describe('the state text of a live episode', () => {
  it('is the authors’ trajectory format, with the open marker when a decision is due', () => {
    const s = play(log.slice(0, 3))
    expect(stateText(s, true)).toBe(
      'Question: Who designed it?\n<solver> agent\nThought 1: Search it.\nAction 1: Search[Calder Lighthouse]\nObservation 1: It was designed by Halvard Brenn.\n<solver>',
    )
    // A step being written is not in the state yet.
    expect(stateText(play(log.slice(0, 4)))).toBe(stateText(s))
  })

  it('parses back to the same steps and path once the episode ended', () => {
    const s = play(log)
    const parsed = parseTrajectory(trajectoryText(s), 'qa')
    expect(trajectoryPath(parsed)).toBe('01')
    expect(parsed.steps.map((x) => [x.solver, x.action.type, x.action.arg])).toEqual([
      ['agent', 'search', 'Calder Lighthouse'],
      ['human', 'finish', 'Halvard Brenn'],
    ])
    expect(trajectoryText(s).endsWith('Observation 2: Episode finished, reward = 1\n')).toBe(true)
  })
})
