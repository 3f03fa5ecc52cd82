import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { MatchSpec, matchGeneric } from './generic'
import { patternProblem } from './pattern'

const root = path.resolve(import.meta.dirname, '../..')

/**
 * Catastrophic patterns for a backtracking engine, each with 100,000-character input that makes it
 * explore every way to split a run before a character that fails the match (input = the parts,
 * each repeated). A backtracking matcher takes 55 s for `(a+)+$` on 29 `a`s and a `!`; a linear one
 * takes milliseconds on all of this.
 */
const CATASTROPHIC: Array<{ pattern: string; parts: Array<[string, number]> }> = [
  { pattern: '(a+)+$', parts: [[`${'a'.repeat(30)}!`, 3226]] },
  { pattern: '(a|aa)+$', parts: [[`${'a'.repeat(40)}!`, 2440]] },
  {
    pattern: '(.*a){20}',
    parts: [
      ['a', 19],
      ['b', 100_000],
    ],
  },
  {
    pattern: '^(\\w+\\s?)*$',
    parts: [
      ['a', 30],
      ['!', 1],
      ['ab ', 33_333],
    ],
  },
]

describe('MATCH regex runs in linear time (ReDoS)', () => {
  it('catastrophic patterns on 100,000 characters return within a second each', () => {
    // In a child process with a deadline: a backtracking engine blocks its thread synchronously,
    // which no in-process timeout can interrupt.
    const script = `
      const { MatchSpec, matchGeneric } = await import(${JSON.stringify(path.join(root, 'lib/tasks/generic.ts'))})
      const cases = ${JSON.stringify(CATASTROPHIC)}
      const out = []
      for (const c of cases) {
        const match = matchGeneric(MatchSpec.parse({ mode: 'regex', pattern: c.pattern }))
        await match('warm up', 'warm up')
        const input = c.parts.map(([text, times]) => text.repeat(times)).join('')
        const t0 = performance.now()
        const result = await match(input, input)
        out.push({ pattern: c.pattern, length: input.length, ms: performance.now() - t0, result })
        console.log(JSON.stringify(out.at(-1)))
      }
    `
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(r.error?.message, `stdout so far: ${r.stdout}`).toBeUndefined()
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const results = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pattern: string; length: number; ms: number; result: boolean })
    expect(results.map((x) => x.pattern)).toEqual(CATASTROPHIC.map((c) => c.pattern))
    for (const x of results) {
      expect(x.length).toBeGreaterThanOrEqual(100_000)
      expect(x.ms, x.pattern).toBeLessThan(1000)
    }
    // None of them matches its input (the suffix makes each fail), so MATCH is false.
    expect(results.map((x) => x.result)).toEqual([false, false, false, false])
  })

  it('keeps the documented semantics: the first capture group is compared, flags apply', async () => {
    const m = (spec: unknown) => matchGeneric(MatchSpec.parse(spec))
    const grade = m({ mode: 'regex', pattern: 'grade\\s*(\\d)' })
    expect(await grade('Tumour GRADE 2, well differentiated', 'grade 2')).toBe(true)
    expect(await grade('grade 2', 'grade 3')).toBe(false)
    // No group: the whole match; a group that did not take part: the whole match too.
    expect(await m({ mode: 'regex', pattern: '[A-Z]\\d+', flags: '' })('see C50', 'C50 it is')).toBe(true)
    expect(await m({ mode: 'regex', pattern: 'x|(y)' })('x', 'X')).toBe(true)
    // Named groups in JavaScript spelling and \u escapes are translated.
    expect(await m({ mode: 'regex', pattern: 'code (?<c>\\d+)' })('code 42', 'CODE 42')).toBe(true)
    expect(await m({ mode: 'regex', pattern: '\\u0041(\\d)', flags: '' })('A1', 'xA1')).toBe(true)
    // Case-sensitive without i; s lets . cross lines; m anchors at line breaks.
    expect(await m({ mode: 'regex', pattern: 'grade (\\d)', flags: '' })('GRADE 2', 'GRADE 2')).toBe(false)
    expect(await m({ mode: 'regex', pattern: 'a(.)b', flags: 's' })('a\nb', 'a\nb')).toBe(true)
    expect(await m({ mode: 'regex', pattern: 'a(.)b', flags: '' })('a\nb', 'a\nb')).toBe(false)
    expect(await m({ mode: 'regex', pattern: '^(\\d)$', flags: 'm' })('x\n3\ny', '3')).toBe(true)
    // The whole prediction is searched (no cut at 10,000 characters any more).
    expect(await m({ mode: 'regex', pattern: 'answer: (\\w+)' })(`${'.'.repeat(20_000)} answer: B`, 'answer: b')).toBe(
      true,
    )
  })
})

describe('patterns the linear-time engine cannot run are refused with a reason', () => {
  const issue = (pattern: string) => {
    const r = MatchSpec.safeParse({ mode: 'regex', pattern })
    expect(r.success, pattern).toBe(false)
    const i = r.error?.issues[0]
    expect(i?.path).toEqual(['pattern'])
    return i?.message ?? ''
  }
  it('backreferences', () => {
    expect(issue('(a)\\1')).toMatch(/Backreferences .* not supported/)
    expect(issue('(?<x>a)\\k<x>')).toMatch(/Backreferences/)
  })
  it('lookahead and lookbehind', () => {
    for (const p of ['(?=a)b', '(?!a)b', '(?<=a)b', '(?<!a)b']) expect(issue(p)).toMatch(/Lookahead and lookbehind/)
  })
  it('invalid syntax names the problem', () => {
    expect(issue('(')).toMatch(/not a valid regular expression \(missing closing \)/)
    expect(issue('a**')).toMatch(/not a valid regular expression/)
  })
  it('patternProblem is null for a pattern it can run', () => {
    expect(patternProblem('grade\\s*(\\d)', 'i')).toBeNull()
    expect(patternProblem('(a+)+$')).toBeNull()
  })
})
