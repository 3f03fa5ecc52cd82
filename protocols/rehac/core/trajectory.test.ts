import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'
import {
  trajectoryPath,
  makeStep,
  parseJsonl,
  parseTrajectory,
  type RehacLine,
  renderTrajectory,
  TrajectoryParseError,
} from './trajectory'

const FILES = [
  'strategyqa.jsonl',
  'results/hotpotqa_lambda0.08.jsonl',
  'results/strategyqa_lambda0.08.jsonl',
  'results/intercode_lambda0.08.jsonl',
]

const QA = [
  'Question: Is water wet?',
  '<solver> agent',
  'Thought 1: I should look it up.',
  'Action 1: Search[Water]',
  'Observation 1: Water is a liquid.',
  '<solver> human',
  'Thought 2: Liquids wet things.',
  'Action 2: Finish[true]',
  'Observation 2: Episode finished, reward = 1',
  '',
  '',
].join('\n')

describe('trajectory text ⇄ steps', () => {
  it('reads the preamble, the question, each step and the choice path', () => {
    const t = parseTrajectory(QA)
    expect(t.kind).toBe('qa')
    expect(t.preamble).toBe('Question: Is water wet?')
    expect(t.question).toBe('Is water wet?')
    expect(t.epilogue).toBeNull()
    expect(t.steps.map((s) => [s.solver, s.n, s.thought, s.action, s.observation, s.blankLines])).toEqual([
      ['agent', 1, 'I should look it up.', { type: 'search', arg: 'Water' }, 'Water is a liquid.', 0],
      ['human', 2, 'Liquids wet things.', { type: 'finish', arg: 'true' }, 'Episode finished, reward = 1', 2],
    ])
    expect(trajectoryPath(t)).toBe('01')
    expect(renderTrajectory(t)).toBe(QA)
  })

  it('renders steps built from fields in the released form', () => {
    const steps = [
      makeStep({
        solver: 'agent',
        n: 1,
        thought: 'I should look it up.',
        action: { type: 'search', arg: 'Water' },
        observation: 'Water is a liquid.',
      }),
      makeStep({
        solver: 'human',
        n: 2,
        thought: 'Liquids wet things.',
        action: { type: 'finish', arg: 'true' },
        observation: 'Episode finished, reward = 1',
        blankLines: 2,
      }),
    ]
    expect(renderTrajectory({ preamble: 'Question: Is water wet?', steps, epilogue: null })).toBe(QA)
  })

  it('reads SQL steps (no Thought) and the "reward = " epilogue', () => {
    const text =
      'Play the SQL game.\nQuestion: How many?\n<solver> human\nAction 1: SELECT count(*) FROM t\nObservation 1: [(3,)]\nreward = 1\n\n'
    const t = parseTrajectory(text)
    expect(t.kind).toBe('sql')
    expect(t.question).toBe('How many?')
    expect(t.steps[0]?.action).toEqual({ type: 'sql', arg: 'SELECT count(*) FROM t' })
    expect(t.steps[0]?.thought).toBeNull()
    expect(t.epilogue).toBe('reward = 1\n\n')
    expect(renderTrajectory(t)).toBe(text)
  })

  it('keeps continuation lines in the part they follow (a lone "Observation" past the stop sequence)', () => {
    const text =
      'Question: Q\n<solver> human\nThought 1: t\nAction 1: Search[x]\nObservation\nObservation 1: Invalid action: search[x]\nObservation\n<solver> agent\nThought 2: u\nAction 2: Finish\nObservation 2: done\n\n'
    const t = parseTrajectory(text)
    expect(t.steps[0]?.action).toEqual({ type: 'invalid', arg: 'Search[x]\nObservation' })
    expect(t.steps[0]?.observation).toBe('Invalid action: search[x]\nObservation')
    expect(t.steps[1]?.action).toEqual({ type: 'invalid', arg: 'Finish' })
    expect(renderTrajectory(t)).toBe(text)
  })

  it('names the line and step of a malformed trajectory', () => {
    const err = (text: string) => {
      try {
        parseTrajectory(text)
      } catch (e) {
        expect(e).toBeInstanceOf(TrajectoryParseError)
        return (e as Error).message
      }
      throw new Error('parsed')
    }
    expect(err('Question: Q\n')).toMatch(/line 1: no "<solver> agent\|human" marker/)
    expect(err('<solver> agent\nThought 1: t\n')).toMatch(/line 1: .*question line is missing/)
    expect(err('Question: Q\n<solver> robot\nThought 1: t\n')).toBe(
      'trajectory line 2 (step 1): bad marker "<solver> robot": expected "<solver> agent" or "<solver> human"',
    )
    expect(
      err(
        'Question: Q\n<solver> agent\nAction 1: Search[x]\nObservation 1: o\n<solver> human\nThought 2: t\nObservation 2: o\n',
      ),
    ).toBe('trajectory line 5 (step 2): step 2 has no "Action n: " line (parts: Thought, Observation)')
    expect(err('Question: Q\n<solver> agent\nAction 1: Search[x]\n')).toMatch(
      /^trajectory line 2 \(step 1\): step 1 has no "Observation n: " line/,
    )
    expect(err('Question: Q\n<solver> agent\nObservation 1: o\nAction 1: Search[x]\n')).toMatch(
      /line 2 \(step 1\): .*not "Thought\* Action Observation"/,
    )
    expect(err('Question: Q\n<solver> agent\n\nstray text\n')).toMatch(
      /^trajectory line 3 \(step 1\): expected "Thought n: "/,
    )
  })

  it('validates released JSONL lines and names the bad line', () => {
    expect(parseJsonl('{"trajectory":"x","em":true,"f1":0.5}\n\n{"idx":3,"trajectory":"y","em":0,"f1":1}\n')).toEqual([
      { trajectory: 'x', em: true, f1: 0.5 },
      { idx: 3, trajectory: 'y', em: 0, f1: 1 },
    ])
    expect(() => parseJsonl('{"trajectory":"x","em":true,"f1":0.5}\n{"trajectory":"x","em":true,"f1":2}')).toThrow(
      /JSONL line 2: f1:/,
    )
    expect(() => parseJsonl('{"trajectory":')).toThrow(/JSONL line 1: not JSON/)
  })
})

describeShared(
  'ReHAC released trajectories round-trip byte for byte',
  () => {
    const files = new Map<string, RehacLine[]>()
    beforeAll(() => {
      for (const f of FILES) files.set(f, parseJsonl(readFileSync(sharedDir('datasets', 'rehac', f), 'utf8')))
    })

    it.each(FILES)('%s: text → steps → text on every line', (f) => {
      const lines = files.get(f) as RehacLine[]
      expect(lines.length).toBe(f === 'strategyqa.jsonl' ? 2420 : 100)
      for (const [i, l] of lines.entries()) {
        const t = parseTrajectory(l.trajectory)
        if (renderTrajectory(t) !== l.trajectory) throw new Error(`${f} line ${i + 1} does not round-trip`)
      }
    })

    it('reads the shapes the files have: steps, human steps, SQL without Thought, odd steps', () => {
      const count = (f: string) => {
        let steps = 0
        let human = 0
        let invalid = 0
        let multiThought = 0
        for (const l of files.get(f) as RehacLine[]) {
          const t = parseTrajectory(l.trajectory)
          steps += t.steps.length
          human += trajectoryPath(t)
            .split('')
            .filter((b) => b === '1').length
          invalid += t.steps.filter((s) => s.action.type === 'invalid').length
          multiThought += t.steps.filter((s) => s.parts.filter((p) => p.label === 'Thought').length > 1).length
        }
        return { steps, human, invalid, multiThought }
      }
      // Counted with grep on the files: "<solver> human" lines; invalid = 13 "Action n: " lines that are not
      // Search/Lookup/Finish[…] (Finish[false, Thought[…], …) + 4 actions that run on into a lone
      // "Observation" / "Observ" line (lines 1609, 1610, 2179, 2183); three steps carry two Thought lines (lines 759, 761, 763).
      expect(count('strategyqa.jsonl')).toEqual({ steps: 8641, human: 4485, invalid: 17, multiThought: 3 })
      expect(count('results/hotpotqa_lambda0.08.jsonl')).toEqual({
        steps: 377,
        human: 194,
        invalid: 0,
        multiThought: 0,
      })
      const ic = parseTrajectory(
        (files.get('results/intercode_lambda0.08.jsonl') as RehacLine[])[0]?.trajectory as string,
      )
      expect(ic.kind).toBe('sql')
      expect(ic.preamble.startsWith('In a SQL-based game')).toBe(true)
      expect(ic.question).toMatch(/^Find the name and membership level of the visitors/)
      expect(ic.steps.map((s) => s.action.arg)).toEqual([
        'SELECT name, membership_level FROM visitors WHERE membership_level > 4 ORDER BY age DESC',
        'SHOW TABLES',
        'DESC visitor',
        'SELECT Name, Level_of_membership FROM visitor WHERE Level_of_membership > 4 ORDER BY Age DESC',
      ])
      expect(ic.epilogue).toBe('reward = 1\n\n')
    })
  },
  'datasets/rehac',
)
