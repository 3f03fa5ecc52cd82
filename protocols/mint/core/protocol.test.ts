import { describe, expect, it } from 'vitest'
import { ProtocolError, replay } from '@/lib/protocols/types'
import {
  addSystemMessage,
  binaryFeedback,
  chatHistory,
  INVALID_INPUT_MESSAGE,
  type MintMessage,
  type MintMessageBody,
  mintConfig,
  mintInstance,
  mintProtocol,
  userMessage,
} from './protocol'
import { feedbackPrompt, instructionPrompt, taskPrompt } from './prompts'

const gsm = mintInstance.parse({ id: '0', dataset: 'gsm8k', prompt: 'What is 2+4?', reference: '6' })
type Out = MintMessageBody
const log = (...ms: Out[]) => ms.map((m, i) => ({ ...m, seq: i + 1 }) as MintMessage)
const agent = (content: string): Out => ({ sender: 'agent', kind: 'turn', content, error: null })
const tool = (output: string): Out => ({ sender: 'tool', kind: 'observation', output, done: false })
const verdict = (correct: boolean): Out => ({ sender: 'env', kind: 'verdict', correct })
const fb = (text: string): Out => ({ sender: 'feedback', kind: 'feedback', text })

describe('MINT protocol', () => {
  it('config: k 5 and p 2 by default, p 1 when k = 1', () => {
    expect(mintConfig.parse({})).toMatchObject({ k: 5, p: 2, feedback: { mode: 'none' }, countDown: true })
    expect(mintConfig.parse({ k: 1 }).p).toBe(1)
    expect(() => mintConfig.parse({ k: 11 })).toThrow()
  })

  it('tool call, wrong proposal, invalid action, right proposal; the history as the authors log it', () => {
    const config = mintConfig.parse({ k: 5 })
    const s = replay(
      mintProtocol,
      config,
      gsm,
      log(
        agent('<execute> print(2+4) </execute>'),
        tool('6\n'),
        agent('The answer is <solution> 7 </solution>.'),
        verdict(false),
        agent('hmm'),
        agent('<solution>6</solution>'),
        verdict(true),
      ),
    )
    expect(s.counts).toEqual({ propose_solution: 2, use_tool: 1, invalid_action: 1 })
    // two proposals of p = 2 used up: the verdict "correct" wins (the authors check success first)
    expect(mintProtocol.next(s)).toEqual({ done: true, reason: 'task_success' })
    const h = chatHistory(s, instructionPrompt(config, gsm))
    expect(h.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ])
    expect(h[2]?.content).toBe('Observation:\n6\nYou have 4 steps left and 2 chances to propose solution left.\n')
    expect(h[4]?.content).toBe(
      'Observation:\nYour answer is wrong.\nYou have 3 steps left and 1 chances to propose solution left.\n',
    )
    expect(h[6]?.content).toBe(
      `Observation:\n${INVALID_INPUT_MESSAGE}\nYou have 2 steps left and 1 chances to propose solution left.\n`,
    )
    expect(h[7]?.content).toBe('Assistant:\n<solution>6</solution>\n')
  })

  it('ends at max_propose_steps and max_steps; the last-step warning at one step left', () => {
    const k2 = mintConfig.parse({ k: 2 })
    const a = replay(
      mintProtocol,
      k2,
      gsm,
      log(agent('<solution>1</solution>'), verdict(false), agent('<solution>2</solution>'), verdict(false)),
    )
    expect(mintProtocol.next(a)).toEqual({ done: true, reason: 'max_propose_steps' })
    const b = replay(mintProtocol, k2, gsm, log(agent('<execute>1</execute>'), tool('1')))
    expect(userMessage(b.turns[0] as (typeof b.turns)[0])).toBe(
      'Observation:\n1\nYou have 1 steps left and 2 chances to propose solution left.\nYou should take the last step to propose a solution.\n',
    )
    const c = replay(mintProtocol, k2, gsm, log(agent('<execute>1</execute>'), tool('1'), agent('no tags')))
    expect(mintProtocol.next(c)).toEqual({ done: true, reason: 'max_steps' })
    const d = replay(
      mintProtocol,
      k2,
      gsm,
      log({ sender: 'agent', kind: 'turn', content: '', error: 'context length exceeded' }),
    )
    expect(mintProtocol.next(d)).toEqual({ done: true, reason: 'error' })
    expect(d.error).toBe('context length exceeded')
  })

  it('asks the feedback seat every turn (dense) or after proposals only (sparse), never when finished', () => {
    const dense = mintConfig.parse({ feedback: { mode: 'textual' } })
    const s1 = replay(mintProtocol, dense, gsm, log(agent('<execute>x</execute>'), tool('1')))
    expect(mintProtocol.next(s1)).toMatchObject({ seat: 'feedback', kind: 'feedback', j: 3 })
    const s2 = mintProtocol.apply(s1, { seq: 3, sender: 'feedback', kind: 'feedback', text: 'This is GOOD. Go on.' })
    expect(chatHistory(s2, 'P')[2]?.content).toBe(
      'Observation:\n1\nYou have 4 steps left and 2 chances to propose solution left.\n\nExpert feedback:\nThis is GOOD. Go on.\n',
    )
    const sparse = mintConfig.parse({ feedback: { mode: 'textual', frequency: 'sparse' } })
    const t1 = replay(mintProtocol, sparse, gsm, log(agent('<execute>x</execute>'), tool('1')))
    expect(mintProtocol.next(t1)).toMatchObject({ seat: 'agent' })
    const t2 = replay(mintProtocol, sparse, gsm, log(agent('<solution>1</solution>'), verdict(false)))
    expect(mintProtocol.next(t2)).toMatchObject({ seat: 'feedback' })
    const t3 = replay(mintProtocol, dense, gsm, log(agent('<solution>6</solution>'), verdict(true)))
    expect(mintProtocol.next(t3)).toEqual({ done: true, reason: 'task_success' })
  })

  it('binary feedback keeps GOOD / BAD of the first sentence', () => {
    expect(binaryFeedback('This is GOOD. You did well.')).toBe('This is GOOD.')
    expect(binaryFeedback('This is BAD. Try again; GOOD luck.')).toBe('This is BAD.')
    expect(binaryFeedback('Fine. This is GOOD.')).toBe('')
    expect(binaryFeedback('no sentence')).toBe('')
    const binary = mintConfig.parse({ feedback: { mode: 'binary' } })
    const s = replay(
      mintProtocol,
      binary,
      gsm,
      log(agent('<execute>x</execute>'), tool('1'), fb('This is NOT GOOD. Hm.')),
    )
    expect(s.turns[0]?.feedback).toBe('This is GOOD.') // the authors' rule: "GOOD" in "This is NOT GOOD."
  })

  it('refuses out-of-turn, misnumbered and late messages with typed codes', () => {
    const config = mintConfig.parse({})
    const s = mintProtocol.init(config, gsm)
    const code = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return e instanceof ProtocolError ? e.code : 'other'
      }
      return null
    }
    expect(
      code(() => mintProtocol.apply(s, { seq: 1, sender: 'tool', kind: 'observation', output: '', done: false })),
    ).toBe('not_your_turn')
    expect(
      code(() => mintProtocol.apply(s, { seq: 2, sender: 'agent', kind: 'turn', content: 'x', error: null })),
    ).toBe('bad_seq')
    const done = replay(mintProtocol, config, gsm, log(agent('<solution>6</solution>'), verdict(true)))
    expect(
      code(() => mintProtocol.apply(done, { seq: 3, sender: 'agent', kind: 'turn', content: 'x', error: null })),
    ).toBe('finished')
  })

  it('an empty <solution></solution> is a proposal answered with the formatting error (the authors’ rule)', () => {
    const s = replay(mintProtocol, mintConfig.parse({}), gsm, log(agent('<solution> </solution>')))
    expect(s.counts.propose_solution).toBe(1)
    expect(s.turns[0]?.observation).toBe(INVALID_INPUT_MESSAGE)
    expect(mintProtocol.next(s)).toMatchObject({ seat: 'agent' })
  })

  it('task prompts per data set and the chat split', () => {
    expect(taskPrompt(mintInstance.parse({ id: '1', dataset: 'theoremqa', prompt: ' Q? ', reference: '1' }))).toBe(
      'Answer the following question with a number, a list of numbers or True or False. Q?',
    )
    expect(taskPrompt(mintInstance.parse({ id: '1', dataset: 'humaneval', prompt: 'def f():\n', reference: '' }))).toBe(
      'Complete the following code:\n\ndef f():\n',
    )
    expect(
      taskPrompt(mintInstance.parse({ id: '1', dataset: 'mbpp', prompt: '"""Write f."""\n', reference: '' })),
    ).toBe('Write f.')
    const p = instructionPrompt(mintConfig.parse({ k: 3 }), gsm)
    expect(p).toContain(
      'You have 3 chances to interact with the environment or propose a solution. You can only propose a solution 2 times.',
    )
    expect(p.endsWith('\n---\n\nTask:\nWhat is 2+4?\n')).toBe(true)
    const [sys, user] = addSystemMessage([{ role: 'user', content: p }])
    expect(sys?.content.startsWith('You are a helpful assistant')).toBe(true)
    expect(sys?.content.includes('wikipedia_search')).toBe(true)
    expect(user?.content.startsWith('\nTask:\nEvaluate')).toBe(true)
  })

  it('the feedback prompt: trajectory from Task:, the reference only with ground truth', () => {
    const noGt = mintConfig.parse({ feedback: { mode: 'textual' } })
    const s = replay(mintProtocol, noGt, gsm, log(agent('<execute>x</execute>'), tool('1')))
    const prompt = feedbackPrompt(s, chatHistory(s, instructionPrompt(noGt, gsm)))
    expect(prompt.startsWith('You are an expert tasked with evaluating')).toBe(true)
    expect(prompt).toContain(
      '\nTask:\nWhat is 2+4?\n\nAssistant:\n<execute>x</execute>\n\nObservation:\n1\nYou have 4 steps left',
    )
    expect(prompt).toContain(
      'Correct solution (please DO NOT disclose the correct solution to the assistant): NOT GIVEN\n',
    )
    expect(prompt.endsWith('Now provide your feedback.\nExpert feedback:\n')).toBe(true)
    expect(prompt).not.toContain('You are a helpful assistant')
    const gt = mintConfig.parse({ feedback: { mode: 'textual', groundTruth: true } })
    const s2 = replay(mintProtocol, gt, gsm, log(agent('<execute>x</execute>'), tool('1')))
    expect(feedbackPrompt(s2, chatHistory(s2, instructionPrompt(gt, gsm)))).toContain('assistant): 6\n')
  })
})
