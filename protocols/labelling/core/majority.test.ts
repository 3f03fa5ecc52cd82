import { describe, expect, it } from 'vitest'
import { majorityOf } from '@/protocols/labelling/core/majority'

describe('majorityOf', () => {
  it('the most frequent label; null on a tie or with no labels', () => {
    expect(majorityOf([2, 2, 1])).toBe(2)
    expect(majorityOf([0, 0, 0])).toBe(0)
    expect(majorityOf([2, 1, 0])).toBeNull()
    expect(majorityOf([1, 0])).toBeNull()
    expect(majorityOf([])).toBeNull()
    expect(majorityOf(['yes', 'no', 'yes'])).toBe('yes')
    // A number and its text are different labels (answers keep their option's type).
    expect(majorityOf([1, '1', 1])).toBe(1)
  })
})
