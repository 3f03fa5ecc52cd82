import { describe, expect, it } from 'vitest'
import { REACT_INSTRUCTION } from '@/protocols/rehac/core/prompts'
import { branchOfKey, parseStepReply, SIMULATED_HUMAN_LINE, stepPrompt } from '@/protocols/rehac/server/agents'
import type { RehacState } from '@/protocols/rehac/core/protocol'
import { rehacDemo } from '@/protocols/rehac/server/plugin'

describe('reading a model step', () => {
  it('takes Thought and Action of step t, with or without the Thought label', () => {
    expect(parseStepReply(' I need the lighthouse.\nAction 2: Search[Calder Lighthouse]', 'qa', 2)).toEqual({
      thought: 'I need the lighthouse.',
      action: { type: 'search', arg: 'Calder Lighthouse' },
    })
    expect(parseStepReply('Thought 1: Done.\nAction 1: finish[1874]\n', 'yesno', 1)).toEqual({
      thought: 'Done.',
      action: { type: 'finish', arg: '1874' },
    })
  })

  it('marks what is not a step as invalid (the protocol refuses it), also an Action of another step', () => {
    expect(parseStepReply('The answer is 1874.', 'qa', 1).action.type).toBe('invalid')
    expect(parseStepReply('Thought 1: x\nAction 1: Answer[1874]', 'qa', 1).action).toEqual({
      type: 'invalid',
      arg: 'Answer[1874]',
    })
    expect(parseStepReply('Thought 3: x\nAction 3: Search[a]', 'qa', 2).action.type).toBe('invalid')
  })

  it('reads a SQL step as one statement or submit, with no Thought', () => {
    expect(parseStepReply('Action 1: SELECT 1', 'sql', 1)).toEqual({
      thought: null,
      action: { type: 'sql', arg: 'SELECT 1' },
    })
    expect(parseStepReply(' submit', 'sql', 3)).toEqual({ thought: null, action: { type: 'submit', arg: '' } })
    expect(parseStepReply('  ', 'sql', 1).action.type).toBe('invalid')
  })
})

describe('tree keys and the demo model', () => {
  it('reads the branch of a fork key, none for the plan grid', () => {
    expect(branchOfKey('inst1/0110')).toBe('0110')
    expect(branchOfKey('inst1/01#2')).toBe('01')
    expect(branchOfKey('1:0')).toBe('')
  })

  it('answers ReAct prompts with a step of the right number and the prompt policy with [ChatGPT]', () => {
    const prompt = (rest: string) => ({
      messages: [{ role: 'user' as const, content: `${REACT_INSTRUCTION}\n${rest}` }],
    })
    const first = rehacDemo(
      prompt('Question: Who designed the lighthouse at the mouth of the Ostrin River?\nThought 1:'),
    )
    expect(parseStepReply(first ?? '', 'qa', 1).action).toEqual({ type: 'search', arg: 'Ostrin River' })
    const second = rehacDemo(
      prompt('Question: q\nThought 1: a\nAction 1: Search[X]\nObservation 1: Port Calder is a city.\nThought 2:'),
    )
    expect(parseStepReply(second ?? '', 'qa', 2).action).toEqual({ type: 'finish', arg: 'Port Calder is' })
    expect(rehacDemo({ messages: [{ role: 'user', content: 'Imagine you are a clever planner.\n…' }] })).toBe(
      '[ChatGPT]',
    )
    expect(rehacDemo({ messages: [{ role: 'user', content: 'Hello' }] })).toBeUndefined()
  })

  it('as the simulated human on a demo question finishes at once with the demo answer (yes/no as yes/no)', () => {
    const human = (question: string, kind: 'qa' | 'yesno' | 'sql', t = 1) => {
      const state = {
        instance: { id: 'x', kind, question, answer: '' },
        steps: [],
      } as unknown as RehacState
      const messages = stepPrompt(state, t, true)
      expect(messages[0]?.content).toBe(SIMULATED_HUMAN_LINE)
      return rehacDemo({ messages }) ?? ''
    }
    expect(
      parseStepReply(human('Was Ilsa Varkonen born before the Calder Lighthouse was completed?', 'yesno'), 'yesno', 1)
        .action,
    ).toEqual({ type: 'finish', arg: 'no' })
    expect(
      parseStepReply(human('Is the Kestrel Cup older than the Velmoran Football League?', 'yesno'), 'yesno', 1).action,
    ).toEqual({ type: 'finish', arg: 'yes' })
    expect(
      parseStepReply(human('Who designed the lighthouse that stands at the mouth of the Ostrin River?', 'qa'), 'qa', 1)
        .action,
    ).toEqual({ type: 'finish', arg: 'Halvard Brenn' })
    expect(parseStepReply(human('List the titles of all mystery books.', 'sql'), 'sql', 1).action).toEqual({
      type: 'sql',
      arg: "SELECT title FROM book WHERE genre = 'mystery'",
    })
    // Another question: it plays as the demo agent does (a search at step 1).
    expect(parseStepReply(human('Who founded the Harrow Glass Works?', 'qa'), 'qa', 1).action.type).toBe('search')
  })
})
