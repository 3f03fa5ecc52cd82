import { describe, expect, it } from 'vitest'
import {
  agreeQuestion,
  genericContextTurn,
  genericPrompt,
  genericQuery,
  MatchSpec,
  matchGeneric,
  numberIn,
  TaskTemplate,
} from './generic'

const m = (spec: unknown) => matchGeneric(MatchSpec.parse(spec))

describe('MATCH modes of the generic template', () => {
  it('exact compares trimmed text, case and inner spaces included', async () => {
    const f = m({ mode: 'exact' })
    expect(await f(' Pneumonia ', 'Pneumonia')).toBe(true)
    expect(await f('pneumonia', 'Pneumonia')).toBe(false)
    expect(await f('a  b', 'a b')).toBe(false)
  })
  it('case-insensitive folds case and runs of spaces', async () => {
    const f = m({ mode: 'case-insensitive' })
    expect(await f('Pleural  Effusion', 'pleural effusion')).toBe(true)
    expect(await f('Effusion', 'Pleural effusion')).toBe(false)
  })
  it('set ignores order, duplicates, case and blanks; the separator is configurable', async () => {
    const f = m({ mode: 'set' })
    expect(await f('B, a, A', 'a,b')).toBe(true)
    expect(await f('a,b', 'a,b,c')).toBe(false)
    expect(await f(',', ',')).toBe(false) // no items on either side is not a match
    expect(await m({ mode: 'set', separator: ';' })('x; y', 'y;x')).toBe(true)
  })
  it('regex compares the first capture group (or the whole match); no match on either side is no MATCH', async () => {
    const f = m({ mode: 'regex', pattern: 'grade\\s*(\\d)' })
    expect(await f('Tumour grade 2, well differentiated', 'GRADE 2')).toBe(true)
    expect(await f('grade 2', 'grade 3')).toBe(false)
    expect(await f('no grade given', 'grade 3')).toBe(false)
    expect(await m({ mode: 'regex', pattern: '[A-Z]\\d+', flags: '' })('see C50', 'C50 it is')).toBe(true)
  })
  it('refuses an invalid regular expression when the template is defined', () => {
    expect(MatchSpec.safeParse({ mode: 'regex', pattern: '(' }).success).toBe(false)
    expect(MatchSpec.safeParse({ mode: 'regex', pattern: 'a', flags: 'g' }).success).toBe(false)
  })
  it('numeric: absolute and relative tolerance; text without a number never matches', async () => {
    const abs = m({ mode: 'numeric', tolerance: 0.5 })
    expect(await abs('about 10.4 mg', '10')).toBe(true)
    expect(await abs('10.6', '10')).toBe(false)
    expect(await abs('n/a', '10')).toBe(false)
    const rel = m({ mode: 'numeric', tolerance: 0.1, relative: true })
    expect(await rel('110', '100')).toBe(true) // |110 − 100| = 10 ≤ 0.1 × 110 = 11
    expect(await rel('89', '100')).toBe(false) // 11 > 0.1 × 100 = 10
    expect(await m({ mode: 'numeric' })('1,000', '1000.0')).toBe(true)
  })
  it('numberIn reads decimals, signs, exponents and thousands separators', () => {
    expect(numberIn('-3.5e2 units')).toBe(-350)
    expect(numberIn('1,234,567.5')).toBe(1234567.5)
    expect(numberIn('.5')).toBe(0.5)
    expect(numberIn('none')).toBeNull()
  })
})

describe('generic prompts (the paper’s Examples 1–2 with the template’s words)', () => {
  const t = TaskTemplate.parse({
    name: 'Dose',
    systemPrompt: 'You are a pharmacist.',
    queryPrompt: 'What dose of {drug} for a patient of {weight} kg?',
    predictionField: 'Dose',
    explanationField: 'Reasoning',
    labels: [],
    match: { mode: 'numeric', tolerance: 5 },
  })
  it('system prompt with the output format, the dialogue as turns, then the query with fields filled', () => {
    const turns = [
      genericContextTurn(t, { sender: 'm', tag: 'INIT', y: '100', e: 'weight based' }),
      genericContextTurn(t, { sender: 'h', tag: 'REFUTE', y: '70', e: '1 mg/kg' }),
    ]
    const p = genericPrompt(t, turns, genericQuery(t, { drug: 'X', weight: 70 }))
    expect(p[0]?.role).toBe('system')
    expect(p[0]?.content).toContain('You are a pharmacist.')
    expect(p[0]?.content).toContain('Dose: <dose>\nReasoning: <reasoning>')
    expect(p[0]?.content).toMatch(/Use the following as context:$/)
    expect(p[1]).toEqual({
      role: 'assistant',
      content: 'This is my initial answer:\nDose: 100\nReasoning: weight based',
    })
    expect(p[2]?.role).toBe('user')
    expect(p[2]?.content).toContain('I refute your answer')
    expect(p[3]).toEqual({ role: 'user', content: 'What dose of X for a patient of 70 kg?' })
  })
  it('the AGREE prompt needs {A} and {B}', () => {
    expect(TaskTemplate.safeParse({ ...t, agreePrompt: 'Are they the same?' }).success).toBe(false)
    expect(agreeQuestion(t, 'one', 'two')).toContain('Given A: one\nand B: two')
  })
})
