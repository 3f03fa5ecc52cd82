import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Answer, agentTag, allowedTags, type Category, category, changed, deriveTag, legalTags } from './agent'
import type { PxpTag } from './tags'

describe('category (Procedure 2, lines 13–16)', () => {
  it.each([
    [true, true, 'A'],
    [true, false, 'B'],
    [false, true, 'C'],
    [false, false, 'D'],
  ] as const)('MATCH=%s AGREE=%s → %s', (m, a, expected) => {
    expect(category(m, a)).toBe(expected)
  })
})

describe('changed (Procedure 2, line 17)', () => {
  it.each([
    [true, true, false],
    [true, false, true],
    [false, true, true],
    [false, false, true],
  ] as const)('MATCH(y,y″)=%s AGREE(e,e″)=%s → %s', (m, a, expected) => {
    expect(changed(m, a)).toBe(expected)
  })
})

describe('deriveTag: every row of the tag table', () => {
  // k = 3 as in the authors' code: j = 2, 3 are "j ≤ k", j = 4, 5 are "j > k".
  const rows: [number, Category, boolean, PxpTag][] = [
    // A → RATIFY, whatever Changed and j
    [2, 'A', false, 'RATIFY'],
    [2, 'A', true, 'RATIFY'],
    [5, 'A', false, 'RATIFY'],
    [5, 'A', true, 'RATIFY'],
    // B or C → REVISE if Changed else REFUTE, before and after k
    [3, 'B', true, 'REVISE'],
    [3, 'B', false, 'REFUTE'],
    [4, 'B', true, 'REVISE'],
    [4, 'B', false, 'REFUTE'],
    [3, 'C', true, 'REVISE'],
    [3, 'C', false, 'REFUTE'],
    [4, 'C', true, 'REVISE'],
    [4, 'C', false, 'REFUTE'],
    // D, j ≤ k → REVISE if Changed else REFUTE
    [2, 'D', true, 'REVISE'],
    [2, 'D', false, 'REFUTE'],
    [3, 'D', true, 'REVISE'],
    [3, 'D', false, 'REFUTE'],
    // D, j > k → REJECT whatever Changed
    [4, 'D', true, 'REJECT'],
    [4, 'D', false, 'REJECT'],
    [9, 'D', true, 'REJECT'],
  ]
  it.each(rows)('j=%i (k=3) category %s Changed=%s → %s', (j, cat, chg, expected) => {
    expect(deriveTag({ j, k: 3, category: cat, changed: chg })).toBe(expected)
  })

  it('j = 1 is INIT whatever the comparison would say', () => {
    expect(deriveTag({ j: 1, k: 3 })).toBe('INIT')
    expect(deriveTag({ j: 1, k: 3, category: 'D', changed: true })).toBe('INIT')
    expect(deriveTag({ j: 1, k: 1, category: 'A' })).toBe('INIT')
  })

  it('the REJECT boundary is exactly j > k', () => {
    expect(deriveTag({ j: 3, k: 3, category: 'D', changed: false })).toBe('REFUTE')
    expect(deriveTag({ j: 4, k: 3, category: 'D', changed: false })).toBe('REJECT')
    expect(deriveTag({ j: 2, k: 1, category: 'D', changed: false })).toBe('REJECT')
  })

  it('refuses missing inputs and bad numbers instead of guessing', () => {
    expect(() => deriveTag({ j: 2, k: 3 })).toThrow(/category/)
    expect(() => deriveTag({ j: 2, k: 3, category: 'B' })).toThrow(/Changed/)
    expect(() => deriveTag({ j: 3, k: 3, category: 'D' })).toThrow(/Changed/)
    // Changed is not needed for A or for D after k
    expect(deriveTag({ j: 3, k: 3, category: 'A' })).toBe('RATIFY')
    expect(deriveTag({ j: 4, k: 3, category: 'D' })).toBe('REJECT')
    expect(() => deriveTag({ j: 0, k: 3 })).toThrow(RangeError)
    expect(() => deriveTag({ j: 2.5, k: 3, category: 'A' })).toThrow(RangeError)
    expect(() => deriveTag({ j: 2, k: 0, category: 'A' })).toThrow(RangeError)
  })
})

describe('agentTag with pluggable MATCH and AGREE', () => {
  const eq = (a: string, b: string) => a === b
  const ans = (y: string, e: string): Answer => ({ y, e })

  it('j = 1 → INIT without asking MATCH or AGREE', () => {
    let calls = 0
    const count = () => {
      calls++
      return true
    }
    expect(agentTag({ j: 1, k: 3, own: ans('a', 'x'), match: count, agree: count })).toEqual({
      tag: 'INIT',
      category: null,
      changed: null,
    })
    expect(calls).toBe(0)
  })

  it('j = 2 compares the partner with the new answer, so Changed is false (deterministic AGREE)', () => {
    const base = { j: 2, k: 3, match: eq, agree: eq }
    expect(agentTag({ ...base, own: ans('a', 'x'), partnerPrev: ans('a', 'x') })).toEqual({
      tag: 'RATIFY',
      category: 'A',
      changed: null,
    })
    expect(agentTag({ ...base, own: ans('a', 'x'), partnerPrev: ans('a', 'other') })).toEqual({
      tag: 'REFUTE',
      category: 'B',
      changed: false,
    })
    expect(agentTag({ ...base, own: ans('a', 'x'), partnerPrev: ans('b', 'x') })).toEqual({
      tag: 'REFUTE',
      category: 'C',
      changed: false,
    })
    expect(agentTag({ ...base, own: ans('a', 'x'), partnerPrev: ans('b', 'z') })).toEqual({
      tag: 'REFUTE',
      category: 'D',
      changed: false,
    })
    // with k = 1, j = 2 > k, so category D is already a REJECT
    expect(agentTag({ ...base, k: 1, own: ans('a', 'x'), partnerPrev: ans('b', 'z') }).tag).toBe('REJECT')
  })

  it('j = 2 ignores an ownPrev the caller passes: (y″, e″) := (y, e)', () => {
    const r = agentTag({
      j: 2,
      k: 3,
      match: eq,
      agree: eq,
      own: ans('a', 'x'),
      ownPrev: ans('zzz', 'zzz'),
      partnerPrev: ans('a', 'x'),
    })
    expect(r.tag).toBe('RATIFY')
  })

  it('j ≥ 3 judges the previous own answer; the new answer decides only Changed', () => {
    const base = { k: 3, match: eq, agree: eq }
    // machine said (a, x) at j=1, human says (b, y) at j=2; the machine now adopts (b, y) at j=3
    expect(agentTag({ ...base, j: 3, own: ans('b', 'y'), ownPrev: ans('a', 'x'), partnerPrev: ans('b', 'y') })).toEqual(
      { tag: 'REVISE', category: 'D', changed: true },
    )
    // …keeps (a, x): REFUTE
    expect(agentTag({ ...base, j: 3, own: ans('a', 'x'), ownPrev: ans('a', 'x'), partnerPrev: ans('b', 'y') })).toEqual(
      { tag: 'REFUTE', category: 'D', changed: false },
    )
    // at j = 5 > k the same disagreement is a REJECT, whatever the new answer
    expect(agentTag({ ...base, j: 5, own: ans('b', 'y'), ownPrev: ans('a', 'x'), partnerPrev: ans('b', 'y') })).toEqual(
      { tag: 'REJECT', category: 'D', changed: null },
    )
    // even if the new answer now equals the partner's, the previous answer decides the category:
    // agreeing only on the prediction (B) and changing the explanation is a REVISE, not a RATIFY
    expect(agentTag({ ...base, j: 4, own: ans('b', 'y'), ownPrev: ans('b', 'x'), partnerPrev: ans('b', 'y') })).toEqual(
      { tag: 'REVISE', category: 'B', changed: true },
    )
    // previous answer already equal to the partner's → RATIFY, even if the new answer wanders off
    expect(
      agentTag({ ...base, j: 4, own: ans('c', 'q'), ownPrev: ans('b', 'y'), partnerPrev: ans('b', 'y') }).tag,
    ).toBe('RATIFY')
  })

  it("passes arguments in the paper's order and short-circuits Changed", () => {
    const calls: string[] = []
    const match = (a: string, b: string) => {
      calls.push(`MATCH(${a},${b})`)
      return a === b
    }
    const agree = (a: string, b: string) => {
      calls.push(`AGREE(${a},${b})`)
      return a === b
    }
    // partner (P, p), own previous (Q, q): category D at j = 3 ≤ k, so Changed is needed.
    // The new answer (R, r) fails MATCH already, so AGREE(e, e″) is not asked.
    agentTag({ j: 3, k: 3, own: ans('R', 'r'), ownPrev: ans('Q', 'q'), partnerPrev: ans('P', 'p'), match, agree })
    expect(calls).toEqual(['MATCH(P,Q)', 'AGREE(p,q)', 'MATCH(R,Q)'])
    calls.length = 0
    // category A: Changed is never evaluated
    agentTag({ j: 3, k: 3, own: ans('R', 'r'), ownPrev: ans('P', 'p'), partnerPrev: ans('P', 'p'), match, agree })
    expect(calls).toEqual(['MATCH(P,P)', 'AGREE(p,p)'])
  })

  it('needs the partner message from j = 2 and the own message from j = 3', () => {
    expect(() => agentTag({ j: 2, k: 3, own: ans('a', 'x'), match: eq, agree: eq })).toThrow(/partner/)
    expect(() =>
      agentTag({ j: 3, k: 3, own: ans('a', 'x'), partnerPrev: ans('a', 'x'), match: eq, agree: eq }),
    ).toThrow(/own message 1/)
  })

  it('property: with a reflexive MATCH and AGREE nothing REVISEs at j = 2', () => {
    const answer = fc.record({ y: fc.constantFrom('a', 'b', 'c'), e: fc.constantFrom('x', 'y', 'z') })
    fc.assert(
      fc.property(
        answer,
        answer,
        fc.integer({ min: 1, max: 5 }),
        fc.func(fc.boolean()),
        fc.func(fc.boolean()),
        (own, partner, k, m, a) => {
          const match = (p: string, q: string) => p === q || m(p, q)
          const agree = (p: string, q: string) => p === q || a(p, q)
          const r = agentTag({ j: 2, k, own, partnerPrev: partner, match, agree })
          expect(r.tag).not.toBe('REVISE')
          expect(r.changed === null || r.changed === false).toBe(true)
        },
      ),
    )
  })

  it('property: the derived tag is always one the rules allow at j', () => {
    const answer = fc.record({ y: fc.constantFrom('a', 'b'), e: fc.constantFrom('x', 'y') })
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        answer,
        answer,
        answer,
        fc.func(fc.boolean()),
        fc.func(fc.boolean()),
        (j, k, own, ownPrev, partnerPrev, match, agree) => {
          const { tag } = agentTag({ j, k, own, ownPrev, partnerPrev, match, agree })
          expect(legalTags(j, k)).toContain(tag)
        },
      ),
    )
  })
})

describe('allowedTags for the expert UI', () => {
  it('j = 1 offers INIT only', () => {
    expect(allowedTags(1, 3)).toEqual(['INIT'])
    expect(allowedTags(1, 3, 'INIT')).toEqual(['INIT'])
    expect(() => allowedTags(1, 3, 'RATIFY')).toThrow(/not allowed/)
  })

  it('REJECT only when j > k', () => {
    expect(allowedTags(2, 3)).toEqual(['RATIFY', 'REFUTE', 'REVISE'])
    expect(allowedTags(3, 3)).toEqual(['RATIFY', 'REFUTE', 'REVISE'])
    expect(allowedTags(4, 3)).toEqual(['RATIFY', 'REFUTE', 'REVISE', 'REJECT'])
    expect(allowedTags(2, 1)).toEqual(['RATIFY', 'REFUTE', 'REVISE', 'REJECT'])
  })

  it('puts the derived tag first, then the other legal tags', () => {
    expect(allowedTags(4, 3, 'REVISE')).toEqual(['REVISE', 'RATIFY', 'REFUTE', 'REJECT'])
    expect(allowedTags(4, 3, 'REJECT')).toEqual(['REJECT', 'RATIFY', 'REFUTE', 'REVISE'])
    expect(allowedTags(2, 3, 'REFUTE')).toEqual(['REFUTE', 'RATIFY', 'REVISE'])
  })

  it('refuses a derived tag the rules forbid', () => {
    expect(() => allowedTags(3, 3, 'REJECT')).toThrow(/not allowed/)
    expect(() => allowedTags(2, 3, 'INIT')).toThrow(/not allowed/)
  })
})
