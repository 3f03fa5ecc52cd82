import { describe, expect, it } from 'vitest'
import { binarise, type Judgement, parseJudgement } from './parse'

const ok = (j: Judgement) => {
  if (!j.ok) throw new Error(`expected a judgement, got: ${j.reason}`)
  return j
}
const reason = (j: Judgement) => {
  if (j.ok) throw new Error(`expected a refusal, got ${JSON.stringify(j)}`)
  return j.reason
}

describe('reading the labeller reply (the continuation of the prompt’s [{)', () => {
  it('-----: one overall label', () => {
    expect(parseJudgement('"O": 2}]', '-----')).toEqual({ ok: true, judges: [{ O: 2 }], score: 2, binary: 1 })
    expect(parseJudgement('"O": 0}]', '-----')).toEqual({ ok: true, judges: [{ O: 0 }], score: 0, binary: 0 })
    expect(parseJudgement(' "O": 1 } ]\n', 'RDN--')).toEqual({ ok: true, judges: [{ O: 1 }], score: 1, binary: 1 })
  })

  it('---A-: aspects are kept, only O is scored', () => {
    const j = ok(parseJudgement('"M": 2, "T": 0, "O": 1}]', '---A-'))
    expect(j.judges).toEqual([{ M: 2, T: 0, O: 1 }])
    expect(j.score).toBe(1)
    // A high M and T with O = 0 scores 0: the overall label need not be their average.
    expect(ok(parseJudgement('"M": 2, "T": 2, "O": 0}]', '-DNA-')).score).toBe(0)
  })

  it('----M: five judges, the mean of their O', () => {
    const j = ok(parseJudgement('"O": 1}, {"O": 2}, {"O": 0}, {"O": 1}, {"O": 1}]', '----M'))
    expect(j.judges).toHaveLength(5)
    expect(j.score).toBeCloseTo(1, 12)
    expect(j.binary).toBe(1)
    const low = ok(parseJudgement('"O": 1}, {"O": 0}, {"O": 0}, {"O": 1}, {"O": 2}]', 'R---M'))
    expect(low.score).toBeCloseTo(0.8, 12)
    expect(low.binary).toBe(0)
  })

  it('RDNAM: five judges with aspects, the mean of O only', () => {
    const reply =
      '"M": 2, "T": 1, "O": 1}, {"M": 1, "T": 1, "O": 1}, {"M": 2, "T": 2, "O": 2}, {"M": 1, "T": 0, "O": 0}, {"M": 2, "T": 2, "O": 2}]'
    const j = ok(parseJudgement(reply, 'RDNAM'))
    expect(j.judges[3]).toEqual({ M: 1, T: 0, O: 0 })
    expect(j.score).toBeCloseTo(6 / 5, 12)
    expect(j.binary).toBe(1)
  })

  it('without aspects, stray M or T keys are ignored whatever they hold', () => {
    expect(ok(parseJudgement('"M": 7, "T": "high", "O": 2}]', '-DN--')).judges).toEqual([{ O: 2 }])
    // With aspects they must be labels.
    expect(reason(parseJudgement('"M": 7, "T": 1, "O": 2}]', '-DNA-'))).toMatch(
      /"M" is 7, but a score must be the integer 0, 1 or 2/,
    )
  })

  it('accepts a reply that repeats the primer, restarts the object, or is fenced', () => {
    expect(ok(parseJudgement('[{"O": 2}]', '-----')).score).toBe(2)
    expect(ok(parseJudgement('{"O": 2}]', '-----')).score).toBe(2)
    // Figure 3's "JSON dictionary": a bare object.
    expect(ok(parseJudgement('{"M": 1, "T": 1, "O": 1}', '-DNA-')).judges).toEqual([{ M: 1, T: 1, O: 1 }])
    expect(ok(parseJudgement('```json\n[{"O": 1}, {"O": 2}]\n```', '----M')).score).toBeCloseTo(1.5, 12)
    expect(ok(parseJudgement('Here you are:\n```\n[{"O": 0}]\n```\nDone.', '-----')).score).toBe(0)
    // An opening fence the reply never closed (cut off).
    expect(ok(parseJudgement('```json\n[{"O": 2}]', '-----')).score).toBe(2)
  })

  it('drops prose after the array', () => {
    expect(ok(parseJudgement('"O": 2}]\n\nThe page is about the telescope’s discoveries.', '-----')).score).toBe(2)
  })

  it('closes a reply cut short, keeping the complete judges only', () => {
    const j = ok(parseJudgement('"M": 2, "T": 1, "O": 1}, {"M": 1, "T": 2, "O": 2}, {"M": 1, "T"', 'RDNAM'))
    expect(j.judges).toEqual([
      { M: 2, T: 1, O: 1 },
      { M: 1, T: 2, O: 2 },
    ])
    expect(j.score).toBe(1.5)
    expect(ok(parseJudgement('"O": 0}, {"O": 0}, ', '----M')).judges).toHaveLength(2)
  })

  it('refuses non-integer and out-of-range labels', () => {
    expect(reason(parseJudgement('"O": 1.5}]', '-----'))).toMatch(
      /judgement 1: "O" is 1.5, but a score must be the integer 0, 1 or 2/,
    )
    expect(reason(parseJudgement('"O": 3}]', '-----'))).toMatch(/"O" is 3/)
    expect(reason(parseJudgement('"O": -1}]', '-----'))).toMatch(/"O" is -1/)
    expect(reason(parseJudgement('"O": "2"}]', '-----'))).toMatch(/"O" is "2"/)
    expect(reason(parseJudgement('"O": null}]', '-----'))).toMatch(/"O" is null/)
    expect(reason(parseJudgement('"O": 1}, {"O": 2.5}]', '----M'))).toMatch(/judgement 2: "O" is 2.5/)
    // 1.0 is the number 1 in JSON.
    expect(ok(parseJudgement('"O": 1.0}]', '-----')).score).toBe(1)
  })

  it('refuses a judgement without O, a non-object, too many judges', () => {
    expect(reason(parseJudgement('"M": 2, "T": 1}]', '---A-'))).toBe('judgement 1 has no "O" score')
    expect(reason(parseJudgement('[1, 2]', '-----'))).toBe('the reply holds no complete JSON object')
    expect(reason(parseJudgement('[{"O": 1}, 2, {"O": 0}]', '----M'))).toBe('judgement 2 is not a JSON object')
    expect(reason(parseJudgement(`${'"O": 1}, {'.repeat(10)}"O": 1}]`, '----M'))).toBe(
      'the reply has 11 judgements; 1 to 10 are accepted',
    )
    expect(reason(parseJudgement('[]', '-----'))).toBe('the reply holds no complete JSON object')
  })

  it('refuses prose, the ellipsis of the example, and an empty reply', () => {
    expect(reason(parseJudgement('The page is highly relevant.', '-----'))).toMatch(/no complete JSON object|not JSON/)
    expect(reason(parseJudgement('I would rate this page {2} overall.', '-----'))).toMatch(/not JSON/)
    expect(reason(parseJudgement('"O": 1}, {"O": 2}, {"O": 0...', '----M'))).toMatch(/ellipsis/)
    expect(reason(parseJudgement('"M": 2, "T": 1, "O": 1}, {"M": 1 . . .', 'RDNAM'))).toMatch(/ellipsis/)
    expect(reason(parseJudgement('', '-----'))).toBe('the reply is empty')
    expect(reason(parseJudgement('   \n', '-----'))).toBe('the reply is empty')
    expect(reason(parseJudgement('"O": 1}]'.padEnd(20_001, ' '), '-----'))).toMatch(/longer than 20000 characters/)
  })

  it('binarises a mean at "relevant" (score ≥ 1)', () => {
    expect([0, 0.2, 0.8, 0.999, 1, 1.2, 2].map(binarise)).toEqual([0, 0, 0, 0, 1, 1, 1])
  })

  it('refuses an invalid variant code', () => {
    expect(() => parseJudgement('"O": 1}]', 'DNA')).toThrow(/not a prompt variant/)
  })
})
