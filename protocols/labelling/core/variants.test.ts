import { describe, expect, it } from 'vitest'
import {
  codeOf,
  formatVariant,
  type Paraphrase,
  paraphraseName,
  paraphraseSchema,
  parsePromptName,
  parseVariant,
  TABLE2_ORDER,
} from './variants'

describe('prompt variants (Thomas et al. §B.3)', () => {
  it('reads a code position by position, R D N A M', () => {
    expect(parseVariant('-DNA-')).toEqual({ R: false, D: true, N: true, A: true, M: false })
    expect(parseVariant('R---M')).toEqual({ R: true, D: false, N: false, A: false, M: true })
    expect(parseVariant('-----')).toEqual({ R: false, D: false, N: false, A: false, M: false })
    expect(parseVariant('RDNAM')).toEqual({ R: true, D: true, N: true, A: true, M: true })
    expect(formatVariant({ R: true, D: false, N: true, A: false, M: true })).toBe('R-N-M')
  })

  it('refuses codes that are not variants, saying what a code is', () => {
    for (const bad of ['DNA', '-dna-', 'RDNAMX', 'D-NA-', '--A--', '', '-----/']) {
      expect(() => parseVariant(bad)).toThrow(/is not a prompt variant: .*R D N A M in that order/)
    }
  })

  it('lists the 32 variants in the row order of Table 2 (rows 1–26 as the dump lists them)', () => {
    expect(TABLE2_ORDER).toHaveLength(32)
    expect(new Set(TABLE2_ORDER).size).toBe(32)
    // §B.5.2 rows 1–26, written out from the reference.
    expect(TABLE2_ORDER.slice(0, 26)).toEqual([
      '-----',
      'R----',
      '-D---',
      '--N--',
      '---A-',
      '----M',
      'RD---',
      'R-N--',
      'R--A-',
      'R---M',
      '-DN--',
      '-D-A-',
      '-D--M',
      '--NA-',
      '--N-M',
      '---AM',
      'RDN--',
      'RD-A-',
      'RD--M',
      'R-NA-',
      'R-N-M',
      'R--AM',
      '-DNA-',
      '-DN-M',
      '-D-AM',
      '--NAM',
    ])
    expect(TABLE2_ORDER.slice(26)).toEqual(['RDNA-', 'RDN-M', 'RD-AM', 'R-NAM', '-DNAM', 'RDNAM'])
    // -DNA- is row 23 (Table 1's prompt).
    expect(TABLE2_ORDER.indexOf('-DNA-')).toBe(22)
    for (const c of TABLE2_ORDER) expect(codeOf(parseVariant(c))).toBe(c)
  })

  it('names paraphrases as children of a variant and reads names back', () => {
    const p: Paraphrase = { parent: '-DNA-', id: 'p1', spans: { instructions: 'Rate each web page.' } }
    expect(paraphraseSchema.parse(p)).toEqual(p)
    expect(paraphraseName(p)).toBe('-DNA-/p1')
    expect(parsePromptName('-DNA-/p1')).toEqual({ variant: '-DNA-', paraphrase: 'p1' })
    expect(parsePromptName(' R---M ')).toEqual({ variant: 'R---M' })
    expect(() => parsePromptName('-DNA-/')).toThrow(/paraphrase id/)
    expect(() => parsePromptName('DNA/p1')).toThrow(/not a prompt variant/)
  })

  it('refuses a paraphrase that rewrites nothing, a blank span, an unknown span or a bad parent', () => {
    expect(paraphraseSchema.safeParse({ parent: '-DNA-', id: 'p1', spans: {} }).success).toBe(false)
    expect(paraphraseSchema.safeParse({ parent: '-DNA-', id: 'p1', spans: { steps: '  ' } }).success).toBe(false)
    expect(paraphraseSchema.safeParse({ parent: '-DNA-', id: 'p1', spans: { query: 'x' } }).success).toBe(false)
    expect(paraphraseSchema.safeParse({ parent: 'DNA', id: 'p1', spans: { steps: 'x' } }).success).toBe(false)
    expect(paraphraseSchema.safeParse({ parent: '-DNA-', id: 'a b', spans: { steps: 'x' } }).success).toBe(false)
    const r = paraphraseSchema.safeParse({ parent: '-DNA-', id: 'p1', spans: {} })
    expect(r.success ? '' : r.error.issues[0]?.message).toMatch(
      /rewrites the instructions span, the steps span or both/,
    )
  })
})
