import { describe, expect, it } from 'vitest'
import { branchKey, coverage, coverageForks, parseBranchKey, type TreeEpisode } from './tree'

const ep = (branch: string, path: string, done = true): TreeEpisode => ({ branch, path, done })

describe('the coverage scheduler', () => {
  it('forks the root episode at each of its steps, to the other solver, copying the steps before', () => {
    const root = ep('', '010')
    expect(coverageForks(root, [root])).toEqual([
      { branch: '1', at: 1, solver: 'human', forkSeq: 0, sample: 1 },
      { branch: '00', at: 2, solver: 'agent', forkSeq: 3, sample: 1 },
      { branch: '011', at: 3, solver: 'human', forkSeq: 6, sample: 1 },
    ])
  })

  it('forks a fork only after its forced step, and never a branch another episode took', () => {
    const root = ep('', '010')
    const b1 = ep('1', '10') // forced human at step 1, then agent
    const b00 = ep('00', '001', false) // started, not done: its branch is taken
    // b1's own part is step 2 only: its sibling '11'.
    expect(coverageForks(b1, [root, b1, b00])).toEqual([
      { branch: '11', at: 2, solver: 'human', forkSeq: 3, sample: 1 },
    ])
    // Once '11' runs, b1 needs nothing more; and the root's siblings are all taken.
    const b11 = ep('11', '11')
    expect(coverageForks(b1, [root, b1, b00, b11])).toEqual([])
    expect(coverageForks(root, [root, b1, b00, ep('011', '011')])).toEqual([])
  })

  it('starts a human branch several times for real annotators, never an agent branch twice', () => {
    const root = ep('', '01')
    const forks = coverageForks(root, [root], 3)
    expect(forks.map((f) => `${f.branch}#${f.sample}`)).toEqual(['1#1', '1#2', '1#3', '00#1'])
    // Two samples of '1' exist: only the third is started.
    const again = coverageForks(root, [root, ep('1', '1'), ep('1', '10'), ep('00', '00')], 3)
    expect(again.map((f) => `${f.branch}#${f.sample}`)).toEqual(['1#3'])
  })

  it('a full tree of depth 2 covers every state; a single path covers none', () => {
    expect(coverage(['00', '01', '10', '11'])).toEqual({ states: 3, covered: 3 })
    expect(coverage(['010'])).toEqual({ states: 3, covered: 0 })
    // Episodes end at different depths: '1' finished at step 1.
    expect(coverage(['1', '00', '01'])).toEqual({ states: 2, covered: 2 })
  })

  it('keys round-trip', () => {
    expect(parseBranchKey(branchKey('q:7', '0110'))).toEqual({ question: 'q:7', branch: '0110', sample: 1 })
    expect(parseBranchKey(branchKey('q7', '', 1))).toEqual({ question: 'q7', branch: '', sample: 1 })
    expect(parseBranchKey(branchKey('q7', '1', 3))).toEqual({ question: 'q7', branch: '1', sample: 3 })
    // A plan's key (`<repetition>:<position>`) is not a branch key.
    expect(parseBranchKey('1:0')).toBeNull()
  })
})
