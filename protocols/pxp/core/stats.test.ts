import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatJsonlLine } from '@/protocols/pxp/core/jsonl'
import { PXP_TAGS, type PxpTag } from '@/protocols/pxp/core/tags'
import { intelligibilityReport, type TaggedMessage } from '@/protocols/pxp/core/intelligibility'
import { PxpStatsCollector, pxpStats } from './stats'

const msgLine = (repetition: number, session: string, j: number, tag: PxpTag) =>
  formatJsonlLine({ repetition, session, j, sender: j % 2 ? 'm' : 'h', tag })
const sessionLines = (repetition: number, session: string, ...tags: PxpTag[]) =>
  tags.map((t, i) => msgLine(repetition, session, i + 1, t))

describe('pxpStats', () => {
  it('counts the footnote session', async () => {
    const r = await pxpStats(sessionLines(1, 'a', 'INIT', 'RATIFY', 'RATIFY'))
    expect(r.sessions).toBe(1)
    expect(r.strong).toEqual({ human: { median: 1, min: 1, max: 1 }, machine: { median: 1, min: 1, max: 1 } })
    expect(r.byBound.map((b) => [b.oneWayHuman.median, b.oneWayMachine.median])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
    ])
  })

  it('keeps sessions of different repetitions apart even with the same id', async () => {
    const r = await pxpStats([
      ...sessionLines(1, 'a', 'INIT', 'RATIFY', 'RATIFY'),
      ...sessionLines(2, 'a', 'INIT', 'REFUTE'),
      ...sessionLines(3, 'a', 'INIT', 'REFUTE', 'REVISE', 'RATIFY', 'RATIFY'),
    ])
    expect(r.repetitions).toBe(3)
    expect(r.sessions).toBe(1)
    expect(r.oneWay.machine).toEqual({ median: 1, min: 0, max: 1 })
    expect(r.ultraStrong.machine).toEqual({ median: 0, min: 0, max: 1 })
    expect(r.byBound).toHaveLength(5)
  })

  it('refuses a repeated message number, naming both lines', () => {
    const c = new PxpStatsCollector()
    c.push(msgLine(1, 'a', 1, 'INIT'))
    c.push('')
    expect(() => c.push(msgLine(1, 'a', 1, 'INIT'))).toThrow(
      'line 3: repetition 1, session a already has message 1 (line 1)',
    )
  })

  it('refuses a session with a missing message', () => {
    const c = new PxpStatsCollector()
    for (const l of [msgLine(1, 'a', 1, 'INIT'), msgLine(1, 'a', 2, 'REFUTE'), msgLine(1, 'a', 4, 'RATIFY')]) c.push(l)
    expect(() => c.report()).toThrow(
      'repetition 1, session a: message 3 is missing (the session goes up to message 4, line 3)',
    )
    const d = new PxpStatsCollector()
    d.push(msgLine(1, 'b', 2, 'RATIFY'))
    expect(() => d.report()).toThrow(/session b: message 1 is missing/)
  })

  it('refuses empty input', async () => {
    await expect(pxpStats(['', ' '])).rejects.toThrow('no messages in the input')
  })

  it('property: any line order gives the report computed from the grouped sessions', async () => {
    const arbSession = fc
      .array(fc.constantFrom(...PXP_TAGS.filter((t) => t !== 'INIT')), { maxLength: 9 })
      .map((tags): PxpTag[] => ['INIT', ...tags])
    const arbRuns = fc.array(fc.array(arbSession, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 })
    await fc.assert(
      fc.asyncProperty(
        arbRuns.chain((runs) => {
          const lines = runs.flatMap((sessions, r) =>
            sessions.flatMap((tags, s) => sessionLines(r + 1, `s${s}`, ...tags)),
          )
          return fc.tuple(fc.constant(runs), fc.shuffledSubarray(lines, { minLength: lines.length }))
        }),
        async ([runs, lines]) => {
          const grouped = runs.map((sessions) =>
            sessions.map((tags): TaggedMessage[] =>
              tags.map((tag, i) => ({ j: i + 1, sender: i % 2 ? 'h' : 'm', tag })),
            ),
          )
          expect(await pxpStats(lines)).toEqual(intelligibilityReport(grouped))
        },
      ),
    )
  })
})
