import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { agentTag, agentTagAsync } from './agent'

/** Record that a judge was asked, and answer. */
function noted(log: string[], question: string, answer: boolean): boolean {
  log.push(question)
  return answer
}

describe('agentTagAsync', () => {
  it('gives exactly the tag, category and Changed of agentTag, and asks the judges the same questions', async () => {
    const answer = fc.record({ y: fc.constantFrom('a', 'b', 'c'), e: fc.constantFrom('x', 'y', 'z') })
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 5 }),
        answer,
        answer,
        answer,
        async (j, k, own, ownPrev, partnerPrev) => {
          const syncCalls: string[] = []
          const asyncCalls: string[] = []
          const sync = agentTag({
            j,
            k,
            own,
            ownPrev,
            partnerPrev,
            match: (a, b) => noted(syncCalls, `m:${a}${b}`, a === b),
            agree: (a, b) => noted(syncCalls, `a:${a}${b}`, a === b),
          })
          const viaAsync = await agentTagAsync({
            j,
            k,
            own,
            ownPrev,
            partnerPrev,
            match: async (a, b) => noted(asyncCalls, `m:${a}${b}`, a === b),
            agree: async (a, b) => noted(asyncCalls, `a:${a}${b}`, a === b),
          })
          expect(viaAsync).toEqual(sync)
          expect(asyncCalls).toEqual(syncCalls)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('does not ask AGREE about the new answer when MATCH already says it changed', async () => {
    const asked: string[] = []
    const r = await agentTagAsync({
      j: 3,
      k: 3,
      own: { y: 'Pneumonia', e: 'new' },
      ownPrev: { y: 'Atelectasis', e: 'old' },
      partnerPrev: { y: 'Pneumonia', e: 'truth' },
      match: (a, b) => a === b,
      agree: async (a, b) => {
        asked.push(`${a}|${b}`)
        return false
      },
    })
    expect(r).toEqual({ tag: 'REVISE', category: 'D', changed: true })
    expect(asked).toEqual(['truth|old'])
  })
})
