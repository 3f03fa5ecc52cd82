import { describe, expect, it } from 'vitest'
import {
  checkMultipleChoice,
  checkProposal,
  checkReasoning,
  checkTheoremqa,
  mmluOptions,
  normaliseTheoremqa,
  pyFloat,
  safePythonValue,
} from './checks'
import { mintInstance } from './protocol'

describe('GSM8K / MATH / HotpotQA (ReasoningTask)', () => {
  it.each([
    ['6', '6', true],
    ['6.2', '6', true], // within 5 %
    ['6.31', '6', false], // 5.2 % off
    [' 1E3 ', '1000', true], // Python float() reads exponents and spaces
    ['1_000', '1000', true],
    ['-108', '-108.0', true],
    ['The answer is 6 miles', '6', true], // not a float: substring
    ['Paris, France', 'paris', true],
    ['London', 'paris', false],
    ['60', '6', false], // both floats: 900 % off
    ['x is 60', '6', true], // not a float: "6" is a substring (the authors' rule, a known looseness)
  ])('%j vs %j → %s', (answer, ref, ok) => {
    expect(checkReasoning(answer, ref)).toBe(ok)
  })
  it('the legacy band (0.05·ref without abs, before the authors’ fix) never accepts a negative reference', () => {
    expect(checkReasoning('-108', '-108.0', { legacyTolerance: true })).toBe(false)
    expect(checkReasoning('6', '6', { legacyTolerance: true })).toBe(true)
  })
  it('reads Python floats', () => {
    expect(pyFloat('  -2.5e-3 ')).toBe(-0.0025)
    expect(pyFloat('.5')).toBe(0.5)
    expect(pyFloat('5.')).toBe(5)
    expect(pyFloat('1,000')).toBeNull()
    expect(pyFloat('abc')).toBeNull()
  })
})

describe('MMLU (MultipleChoiceTask)', () => {
  const prompt =
    'What is the largest factor of 54,321 that is less than 54,321?\nOptions: A ) 6 , B ) 121 , C ) 18107 , D ) 54,320'
  it('extracts the options as the authors do', () => {
    expect(Object.fromEntries(mmluOptions(prompt) ?? [])).toEqual({ a: '6', b: '121', c: '18107', d: '54,320' })
  })
  it.each([
    ['C', true],
    ['c', true],
    ['C ) 18107', true],
    ['18107', true],
    ['B', false],
    ['121', false],
    ['a', false],
    // the authors' extract_answer maps any answer holding "a)" to "a"
    ['(a) is wrong, so c', false],
  ])('%j → %s', (answer, ok) => {
    expect(checkMultipleChoice(answer, prompt, 'c')).toBe(ok)
  })
  it('a reference letter inside a longer answer counts (the authors’ substring rule)', () => {
    expect(checkMultipleChoice('The answer is b', prompt, 'a')).toBe(true) // "answer" holds "a"
  })
})

describe('TheoremQA', () => {
  it.each([
    ['x = 1.12', '1.12'],
    ['≈ 3.5', '3.5'],
    ['$5$', '5'],
    ['approximately 7', '7'],
    ['yes', 'True'],
    ['It is False', 'False'],
    ['12 m/s', '12'],
    ['$ 30', '30'],
    ['1,234', '1234'],
    ['3 x 10^5', '3*math.pow(10, 5)'],
    ['(b)', '"(b)"'],
    ['c', '"(c)"'],
    ['', '0'],
    ['[0, 5]', '[0, 5]'],
  ])('normalises %j to %j', (raw, out) => {
    expect(normaliseTheoremqa(raw)).toBe(out)
  })
  it.each([
    ['1.12', { t: 'float', v: 1.12 }],
    ['3/4', { t: 'float', v: 0.75 }],
    ['2**10', { t: 'int', v: 1024 }],
    ['-2**2', { t: 'int', v: -4 }],
    ['7//2', { t: 'int', v: 3 }],
    ['True', { t: 'bool', v: true }],
    ['"(a)"', { t: 'str', v: '(a)' }],
    [
      '[0, 5]',
      {
        t: 'list',
        v: [
          { t: 'int', v: 0 },
          { t: 'int', v: 5 },
        ],
      },
    ],
    [
      '1, 2',
      {
        t: 'list',
        v: [
          { t: 'int', v: 1 },
          { t: 'int', v: 2 },
        ],
      },
    ],
    ['1e3', { t: 'float', v: 1000 }],
  ])('parses %j safely', (src, value) => {
    expect(safePythonValue(src)).toEqual(value)
  })
  it.each(['pi', '2*pi', 'math.pow(10, 5)', '__import__("os")', '1/0', '05', '2pi', '1 +', '(-8)**0.5'])(
    'refuses %j (no value we support)',
    (src) => {
      expect(safePythonValue(src)).toBeNull()
    },
  )
  it.each([
    ['1.15', '1.12', 'float', true], // within 4 %
    ['1.17', '1.12', 'float', false],
    ['5.4', '5', 'integer', true], // round(5.4) == 5
    ['5.6', '5', 'integer', false],
    ['2.5', '2', 'integer', true], // Python rounds half to even
    ['[5, 0]', '[0,5]', 'list of integer', true], // sorted
    ['[0, 6]', '[0,5]', 'list of integer', false],
    ['[0]', '[0,5]', 'list of integer', false],
    ['False', 'false', 'bool', true],
    ['no', 'false', 'bool', true],
    ['True', 'false', 'bool', false],
    ['(b)', '"(b)"', 'option', true],
    ['b', '(b)', 'option', true],
    ['3/4', '0.75', 'float', true],
    ['2*pi', '6.28', 'float', false], // the authors' eval has no pi either
    ['1.12', '1.12', 'complex', false], // an answer type the authors' code cannot compare
  ])('%j vs %s (%s) → %s', (answer, ref, type, ok) => {
    expect(checkTheoremqa(answer, ref, type)).toBe(ok)
  })
})

describe('code and the dispatcher', () => {
  it('HumanEval / MBPP: the program is the proposal, a newline and the reference tests, 10 s', () => {
    const humaneval = mintInstance.parse({
      id: '0',
      dataset: 'humaneval',
      prompt: 'def f(x):\n',
      reference: 'def check(candidate):\n    assert candidate(1) == 2\n\n\ncheck(f)',
    })
    expect(checkProposal(humaneval, 'def f(x):\n    return x + 1')).toEqual({
      kind: 'tests',
      program: 'def f(x):\n    return x + 1\ndef check(candidate):\n    assert candidate(1) == 2\n\n\ncheck(f)',
      timeoutSeconds: 10,
    })
    const alf = mintInstance.parse({ id: 'g', dataset: 'alfworld', prompt: 'p', reference: '', alfworldType: 'put' })
    expect(checkProposal(alf, 'x')).toBeNull()
    const gsm = mintInstance.parse({ id: '0', dataset: 'gsm8k', prompt: 'p', reference: '6' })
    expect(checkProposal(gsm, '6')).toEqual({ kind: 'verdict', correct: true })
  })
})
