import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { multisetIoU, parseSqlTasksJsonl, rowKey } from './sql-reward'

const r = (...cells: (string | null)[]) => cells

describe('multisetIoU', () => {
  it('is 1 for the same rows in another order', () => {
    expect(multisetIoU([r('1', 'a'), r('2', 'b')], [r('2', 'b'), r('1', 'a')])).toBe(1)
  })

  it('counts repeats: {x, x, y} against {x, y} is 2/3', () => {
    expect(multisetIoU([r('x'), r('x'), r('y')], [r('x'), r('y')])).toBeCloseTo(2 / 3, 12)
    expect(multisetIoU([r('x'), r('y')], [r('x'), r('x'), r('y')])).toBeCloseTo(2 / 3, 12)
  })

  it('is the shared share of a partial overlap: {a, b, c} against {b, c, d, e} is 2/5', () => {
    expect(multisetIoU([r('a'), r('b'), r('c')], [r('b'), r('c'), r('d'), r('e')])).toBe(0.4)
  })

  it('is 1 when both are empty, 0 when only one is, 0 when disjoint', () => {
    expect(multisetIoU([], [])).toBe(1)
    expect(multisetIoU([], [r('1')])).toBe(0)
    expect(multisetIoU([r('1')], [])).toBe(0)
    expect(multisetIoU([r('1')], [r('2')])).toBe(0)
  })

  it('compares whole tuples positionally, NULL apart from the text NULL, and cell boundaries kept', () => {
    expect(multisetIoU([r('a', 'b')], [r('b', 'a')])).toBe(0)
    expect(multisetIoU([r(null)], [r('NULL')])).toBe(0)
    expect(multisetIoU([r(null)], [r(null)])).toBe(1)
    expect(multisetIoU([r('a,b')], [r('a', 'b')])).toBe(0)
    expect(rowKey(r('a', null))).toBe('["a",null]')
    // Text as the database wrote it: 1.50 and 1.5 are different answers.
    expect(multisetIoU([r('1.50')], [r('1.5')])).toBe(0)
  })

  it('gives 3 of 4 for one extra row and 1 of 2 for a missing half', () => {
    const gold = [r('1'), r('2'), r('3')]
    expect(multisetIoU([...gold, r('4')], gold)).toBe(0.75)
    expect(multisetIoU([r('1'), r('2')], [r('1'), r('2'), r('3'), r('4')])).toBe(0.5)
  })
})

describe('the SQL task file', () => {
  it('reads the 10 demo tasks', () => {
    const tasks = parseSqlTasksJsonl(readFileSync(path.resolve(import.meta.dirname, '../demo/sql-tasks.jsonl'), 'utf8'))
    expect(tasks).toHaveLength(10)
    expect(new Set(tasks.map((t) => t.id)).size).toBe(10)
  })

  it('names a bad line', () => {
    expect(() => parseSqlTasksJsonl('{"id":"a","request":"r","gold":"SELECT 1"}\n{"id":"b","request":"r"}')).toThrow(
      /^line 2: gold: /,
    )
    expect(() =>
      parseSqlTasksJsonl('{"id":"a","request":"r","gold":"SELECT 1"}\n{"id":"a","request":"r","gold":"SELECT 2"}'),
    ).toThrow('line 2: task id "a" appears twice')
  })
})
