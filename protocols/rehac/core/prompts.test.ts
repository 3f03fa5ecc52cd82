import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { describeShared, sharedDir } from '../../../tests/support/shared'
import {
  parseCollabReply,
  pickFewShotExamples,
  QA_PROMPT_TEMPLATE,
  qaCollabPrompt,
  REACT_DECODING,
  REACT_INSTRUCTION,
  reactStepPrompt,
  reactStop,
  SQL_PROMPT_TEMPLATE,
  sqlCollabPrompt,
  stripSolverMarkers,
  trajectoryForPrompt,
} from './prompts'

// Lines copied from rehac.md §5.8 (Table 5) by hand; rehac.md writes "ChatGPT's" with an ASCII
// apostrophe where the paper has U+2019, hence the one normalisation below.
const TABLE5_LINES = [
  'Imagine you are a clever planner.',
  'Given an unfinished trajectory with several steps, your task is to decide whether the next step should be carried out by ChatGPT or a human. This decision should be based on a thoughtful evaluation of the difficulty of the next step and the progress made in the current trajectory. Here are two finished trajectory examples.',
  "1. If the next step is relatively straightforward and well within ChatGPT's capabilities, instruct ChatGPT to proceed with the next step. If the task is deemed challenging or requires human judgment, recommend human intervention.",
  '2. If the trajectory has been consistently handled by ChatGPT without notable issues, encourage ChatGPT to continue. If there have been challenges or uncertainties in the trajectory, consider suggesting human involvement for the next step.',
  '3. Note that human intervention will significantly increase the cost, so try to balance the accuracy and efficiency.',
  'If the next step should be carried out by ChatGPT, return [ChatGPT], otherwise, return [Human]. Only return [ChatGPT] or [Human].',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the paper's placeholder, not a JS template
  '#Your unfinished trajectory#: ${current trajectory}',
  '#Your return#:',
]
const ascii = (s: string) => s.replaceAll('’', "'")

describe('prompt-baseline templates', () => {
  it('the QA template holds every line of Table 5 as copied in rehac.md', () => {
    const lines = ascii(QA_PROMPT_TEMPLATE).split('\n')
    for (const l of TABLE5_LINES) expect(lines).toContain(l)
    expect(QA_PROMPT_TEMPLATE.startsWith('Imagine you are a clever planner.\n\nGiven')).toBe(true)
    expect(QA_PROMPT_TEMPLATE.endsWith('#Your return#:')).toBe(true)
    expect(QA_PROMPT_TEMPLATE).toContain('ChatGPT’s capabilities')
  })
  it('the SQL template is Table 5 with the three changes rehac.md lists (planner in SQL, SQL commands, next command)', () => {
    const derived = QA_PROMPT_TEMPLATE.replace('a clever planner.', 'a clever planner in SQL.')
      .replace('several steps', 'several SQL commands')
      .replaceAll('next step', 'next command')
    expect(SQL_PROMPT_TEMPLATE).toBe(derived)
    expect(SQL_PROMPT_TEMPLATE).not.toContain('next step')
  })
  it('fills the fields, leaving no placeholder and not re-expanding a placeholder inside a field', () => {
    const inner = ['has $', '{example1} inside'].join('')
    const out = qaCollabPrompt({ example1: 'EX-ONE', example2: inner, currentTrajectory: 'NOW' })
    expect(out).toContain(`Example 1:\n\nEX-ONE\n\nExample 2:\n\n${inner}\n\nNow please`)
    expect(out).toContain('#Your unfinished trajectory#: NOW\n\n#Your return#:')
    expect(out.match(/\$\{/g)).toHaveLength(1)
    expect(sqlCollabPrompt({ example1: 'a', example2: 'b', currentTrajectory: 'c' })).toContain(
      'planner in SQL.\n\nGiven',
    )
  })
  it('renders the state without its open "<solver>" marker, keeping earlier markers', () => {
    expect(trajectoryForPrompt('Question: Q?\n<solver> human\nThought 1: a\n<solver>')).toBe(
      'Question: Q?\n<solver> human\nThought 1: a',
    )
  })
})

describe('prompt-policy reply parser', () => {
  it('strict: only the bare token, surrounding whitespace allowed', () => {
    expect(parseCollabReply('[ChatGPT]')).toEqual({ ok: true, solver: 'agent' })
    expect(parseCollabReply('  [Human]\n')).toEqual({ ok: true, solver: 'human' })
    for (const bad of ['Human', '[human]', '[ChatGPT].', 'I think [Human]', '[ChatGPT] or [Human]', ''])
      expect(parseCollabReply(bad).ok).toBe(false)
    const r = parseCollabReply('I would say a human')
    expect(r.ok === false && r.reason).toMatch(/exactly \[ChatGPT\] or \[Human\]/)
  })
  it('lenient: exactly one token anywhere, any case; both or neither refused', () => {
    expect(parseCollabReply('Answer: [human].', 'lenient')).toEqual({ ok: true, solver: 'human' })
    expect(parseCollabReply('[CHATGPT]', 'lenient')).toEqual({ ok: true, solver: 'agent' })
    const both = parseCollabReply('[ChatGPT] or [Human]', 'lenient')
    expect(both.ok === false && both.reason).toMatch(/both/)
    expect(parseCollabReply('Human', 'lenient').ok).toBe(false)
  })
})

describe('ReAct agent step', () => {
  it('has the decoding constants and the per-step stop sequence', () => {
    expect(REACT_DECODING).toEqual({ temperature: 0, max_tokens: 100, top_p: 1 })
    expect(reactStop(3)).toBe('\nObservation 3:')
  })
  it('builds instruction + examples + marker-free history + "Thought t:"', () => {
    const s = 'Question: Q?\n<solver> human\nThought 1: a\nAction 1: Search[b]\nObservation 1: c\n<solver>'
    expect(stripSolverMarkers(s)).toBe('Question: Q?\nThought 1: a\nAction 1: Search[b]\nObservation 1: c\n')
    expect(reactStepPrompt({ examples: 'EXAMPLES', state: s, t: 2 })).toBe(
      `${REACT_INSTRUCTION}\nEXAMPLES\nQuestion: Q?\nThought 1: a\nAction 1: Search[b]\nObservation 1: c\nThought 2:`,
    )
  })
})

describeShared(
  'prompt templates against the paper text and rehac.md',
  () => {
    it('Table 5 and Table 6 are character-for-character the paper (seed lines 351–375 and 379–403)', () => {
      const paper = readFileSync(sharedDir('seeds', '002_1bf87a1c0e009868.txt'), 'utf8').split('\n')
      expect(QA_PROMPT_TEMPLATE).toBe(paper.slice(350, 375).join('\n'))
      expect(SQL_PROMPT_TEMPLATE).toBe(paper.slice(378, 403).join('\n'))
    })
    it('Table 5 equals rehac.md §5.8 up to the apostrophe, and the ReAct instruction equals its §3.1 quote', () => {
      const md = readFileSync(sharedDir('reference', 'rehac.md'), 'utf8')
      const block = /\*\*QA \(Table 5\):\*\*\n```\n([\s\S]*?)\n```/.exec(md)![1]!
      expect(ascii(QA_PROMPT_TEMPLATE)).toBe(block)
      expect(md).toContain(`> "${REACT_INSTRUCTION}"`)
    })
  },
  'seeds',
)

describeShared(
  'few-shot examples from the released StrategyQA trajectories',
  () => {
    it('picks an agent-only correct trajectory and a correct one with a human step from another question', () => {
      const records = readFileSync(sharedDir('datasets', 'rehac', 'strategyqa.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as { idx: number; trajectory: string; em: number })
      const pick = pickFewShotExamples(records)!
      // 0-based record indices (file lines 1 and 6): idx 296 (agent only) and idx 201 (human steps).
      expect(pick.indices).toEqual([0, 5])
      expect(records[5]!.idx).toBe(201)
      expect(records[0]!.idx).toBe(296)
      expect(pick.example1.startsWith('Question: Would it be safe to have a jackfruit thrown at your head?')).toBe(true)
      expect(pick.example2).toContain('<solver> human')
      const prompt = qaCollabPrompt({ ...pick, currentTrajectory: trajectoryForPrompt(records[1]!.trajectory) })
      expect(prompt).toContain(`Example 1:\n\n${pick.example1}\n\nExample 2:`)
    })
  },
  'datasets/rehac',
)
