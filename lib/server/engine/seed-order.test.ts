import { describe, expect, it } from 'vitest'
import { seedOrder } from './seed-order'

const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id)

describe('seedOrder: the demo seeds in registry order, each after the seeds it names', () => {
  it('keeps registry order when nothing waits', () => {
    expect(ids(seedOrder([{ id: 'a' }, { id: 'b' }, { id: 'c' }]))).toEqual(['a', 'b', 'c'])
  })
  it('moves a seed after the ones it names, wherever they are registered', () => {
    const order = ids(seedOrder([{ id: 'lab', after: ['pxp', 'rehac'] }, { id: 'pxp' }, { id: 'x' }, { id: 'rehac' }]))
    expect(order).toEqual(['pxp', 'rehac', 'lab', 'x'])
    expect(order.indexOf('lab')).toBeGreaterThan(order.indexOf('rehac'))
  })
  it('follows chains, runs each seed once, ignores an id no seed has', () => {
    expect(
      ids(
        seedOrder([
          { id: 'c', after: ['b'] },
          { id: 'b', after: ['a', 'gone'] },
          { id: 'a' },
          { id: 'd', after: ['a'] },
        ]),
      ),
    ).toEqual(['a', 'b', 'c', 'd'])
  })
  it('refuses a cycle, naming it', () => {
    expect(() =>
      seedOrder([
        { id: 'a', after: ['b'] },
        { id: 'b', after: ['a'] },
      ]),
    ).toThrow('a → b → a')
  })
})
