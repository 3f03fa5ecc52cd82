import { describe, expect, it } from 'vitest'
import { ProtocolError } from '@/lib/protocols/types'
import {
  type LabelItem,
  type LabellingMessage,
  type LabellingState,
  LabelSchema,
  labelling,
  qrelsLines,
  RELEVANCE_0_2,
  RELEVANCE_0_2_ASPECTS,
  relevanceOf,
  YES_NO_UNSURE,
} from '@/protocols/labelling/core'

const doc: LabelItem = {
  kind: 'query-doc',
  id: 'q1-d1',
  topicId: '101',
  query: 'hubble telescope achievements',
  docId: 'd1',
  document: 'The Hubble Space Telescope measured the expansion rate of the universe.',
}
const transcript: LabelItem = {
  kind: 'transcript',
  id: 't1',
  sessionId: 's1',
  protocol: 'evince',
  title: 'A debate',
  turns: [
    { index: 0, who: 'A', text: 'Hello' },
    { index: 1, who: 'B', text: 'Hi' },
  ],
}
const start = (schema = RELEVANCE_0_2_ASPECTS, item: LabelItem = doc): LabellingState =>
  labelling.init(labelling.config.parse({ schema }), item)
const label = (answers: Record<string, number | string>, more: Record<string, unknown> = {}) =>
  ({ seq: 1, sender: 'annotator', kind: 'label', schemaVersion: 1, answers, ...more }) as LabellingMessage
const code = (f: () => unknown) => {
  try {
    f()
  } catch (err) {
    if (err instanceof ProtocolError) return err.code
    throw err
  }
  return 'accepted'
}

describe('the label schema', () => {
  it('keeps the paper’s 0–2 scale and instructions verbatim, the overall question last by default', () => {
    const o = RELEVANCE_0_2.questions[0]
    expect(o?.options.map((x) => x.label)).toEqual([
      '2 = highly relevant, very helpful for this query',
      '1 = relevant, may be partly helpful but might contain other irrelevant content',
      '0 = not relevant, should never be shown for this query',
    ])
    expect(RELEVANCE_0_2.guidelines).toMatch(/^Assume that you are writing a report on the subject of the topic\./)
    expect(RELEVANCE_0_2_ASPECTS.questions.map((q) => q.id)).toEqual(['M', 'T', 'O'])
    const parsed = LabelSchema.parse({ ...RELEVANCE_0_2_ASPECTS, overall: undefined })
    expect(parsed.overall).toBe('O')
    for (const p of [RELEVANCE_0_2, RELEVANCE_0_2_ASPECTS, YES_NO_UNSURE]) expect(LabelSchema.parse(p)).toEqual(p)
  })

  it('refuses bad schemas: ids, option counts, duplicates, an overall not asked, ordinal text values, long guidelines', () => {
    const q = {
      id: 'a',
      text: 'x',
      type: 'nominal',
      options: [
        { value: 'y', label: 'Y' },
        { value: 'n', label: 'N' },
      ],
    }
    const ok = { version: 1, questions: [q] }
    expect(LabelSchema.safeParse(ok).success).toBe(true)
    expect(LabelSchema.safeParse({ ...ok, version: 0 }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, questions: [] }).success).toBe(false)
    expect(
      LabelSchema.safeParse({ ...ok, questions: Array.from({ length: 11 }, (_, i) => ({ ...q, id: `q${i}` })) })
        .success,
    ).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, questions: [{ ...q, id: '1a' }] }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, questions: [{ ...q, id: 'a'.repeat(33) }] }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, questions: [{ ...q, options: [q.options[0]] }] }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, questions: [{ ...q, options: [q.options[0], q.options[0]] }] }).success).toBe(
      false,
    )
    expect(LabelSchema.safeParse({ ...ok, questions: [q, q] }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, overall: 'b' }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, questions: [{ ...q, type: 'ordinal' }] }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, guidelines: 'x'.repeat(20_001) }).success).toBe(false)
    expect(LabelSchema.safeParse({ ...ok, guidelines: 'x'.repeat(20_000) }).success).toBe(true)
  })
})

describe('apply', () => {
  it('accepts a full label and ends the session labelled; an unparseable reply ends it unparseable', () => {
    const s = labelling.apply(start(), label({ M: 2, T: 1, O: 1 }, { elapsedMs: 5400 }))
    expect(labelling.next(s)).toEqual({ done: true, reason: 'labelled' })
    const u = labelling.apply(start(), {
      seq: 1,
      sender: 'annotator',
      kind: 'unparseable',
      schemaVersion: 1,
      reason: 'no JSON in the reply',
    })
    expect(labelling.next(u)).toEqual({ done: true, reason: 'unparseable' })
    expect(labelling.next(start())).toEqual({ done: false, seat: 'annotator', j: 1, kind: 'label' })
  })

  it('refuses each broken rule with its code', () => {
    expect(
      code(() => labelling.apply(labelling.apply(start(), label({ M: 2, T: 1, O: 1 })), label({ M: 2, T: 1, O: 1 }))),
    ).toBe('over')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1 }, { schemaVersion: 2 })))).toBe(
      'schema-version',
    )
    expect(code(() => labelling.apply(start(), label({ M: 2, O: 1 })))).toBe('missing-answer')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 3 })))).toBe('invalid-value')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: '1' })))).toBe('invalid-value')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1.5 })))).toBe('invalid-value')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1, X: 1 })))).toBe('unknown-question')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1 }, { rationale: 'because' })))).toBe(
      'rationale-off',
    )
    const required = { ...YES_NO_UNSURE, rationale: 'required' as const }
    expect(code(() => labelling.apply(start(required), label({ answer: 'yes' })))).toBe('rationale-required')
    expect(code(() => labelling.apply(start(required), label({ answer: 'yes' }, { rationale: '  ' })))).toBe(
      'rationale-required',
    )
    expect(code(() => labelling.apply(start(required), label({ answer: 'yes' }, { rationale: 'clear' })))).toBe(
      'accepted',
    )
    expect(code(() => labelling.apply(start(YES_NO_UNSURE), label({ answer: 'maybe' })))).toBe('invalid-value')
    // Per-turn labels: only with perTurn, only on a transcript, only for its turns.
    const perTurn = { ...YES_NO_UNSURE, perTurn: true }
    const turns = (t: Record<string, Record<string, string>>) => label({ answer: 'no' }, { turns: t })
    expect(code(() => labelling.apply(start(YES_NO_UNSURE, transcript), turns({ 0: { answer: 'yes' } })))).toBe(
      'turns-off',
    )
    expect(code(() => labelling.apply(start(perTurn, doc), turns({ 0: { answer: 'yes' } })))).toBe('turns-off')
    expect(code(() => labelling.apply(start(perTurn, transcript), turns({ 2: { answer: 'yes' } })))).toBe(
      'unknown-turn',
    )
    expect(code(() => labelling.apply(start(perTurn, transcript), turns({ 1: { answer: 'perhaps' } })))).toBe(
      'invalid-value',
    )
    expect(code(() => labelling.apply(start(perTurn, transcript), turns({ 0: { answer: 'yes' }, 1: {} })))).toBe(
      'accepted',
    )
    // Not a message of the protocol at all (zod).
    expect(() => labelling.apply(start(), { ...label({ O: 1 }), seq: 2 } as unknown as LabellingMessage)).toThrow()
  })

  it('judges: each judge answers with options; the overall answer is their mean to 1e-9', () => {
    const judges = [
      { M: 2, T: 1, O: 2 },
      { M: 2, T: 2, O: 1 },
      { M: 1, T: 1, O: 1 },
      { M: 2, T: 1, O: 2 },
      { M: 2, T: 2, O: 2 },
    ]
    // Means: M 1.8, T 1.4, O 1.6 (the paper's five simulated raters).
    expect(code(() => labelling.apply(start(), label({ M: 1.8, T: 1.4, O: 1.6 }, { judges })))).toBe('accepted')
    // Aspect answers may also be options rather than means; the overall one must be the mean.
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1.6 }, { judges })))).toBe('accepted')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1.6 + 1e-12 }, { judges })))).toBe('accepted')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 2 }, { judges })))).toBe('judges-mean')
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1.61 }, { judges })))).toBe('judges-mean')
    expect(code(() => labelling.apply(start(), label({ M: 1.7, T: 1, O: 1.6 }, { judges })))).toBe('judges-mean')
    const bad = [...judges.slice(0, 4), { M: 2, T: 3, O: 2 }]
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1.6 }, { judges: bad })))).toBe('judges-invalid')
    const missing = [...judges.slice(0, 4), { M: 2, O: 2 }]
    expect(code(() => labelling.apply(start(), label({ M: 2, T: 1, O: 1.6 }, { judges: missing })))).toBe(
      'judges-invalid',
    )
    // A nominal overall question has no mean.
    expect(
      code(() => labelling.apply(start(YES_NO_UNSURE), label({ answer: 'yes' }, { judges: [{ answer: 'yes' }] }))),
    ).toBe('judges-mean')
  })
})

describe('qrels', () => {
  it('averages the labels of a pair and grades the mean by the rule', () => {
    expect(relevanceOf(1.5, { kind: 'graded' })).toBe(2)
    expect(relevanceOf(1.4, { kind: 'graded' })).toBe(1)
    expect(relevanceOf(0.4, { kind: 'graded' })).toBe(0)
    expect(relevanceOf(1, { kind: 'binary', threshold: 1 })).toBe(1)
    expect(relevanceOf(0.8, { kind: 'binary', threshold: 1 })).toBe(0)
    const labels = [
      { topicId: '102', docId: 'b', value: 0 },
      { topicId: '101', docId: 'z', value: 2 },
      { topicId: '101', docId: 'z', value: 1 },
      { topicId: '101', docId: 'a', value: 1.6 },
    ]
    expect(qrelsLines(labels)).toEqual(['101 0 a 2', '101 0 z 2', '102 0 b 0'])
    expect(qrelsLines(labels, { kind: 'binary', threshold: 2 })).toEqual(['101 0 a 0', '101 0 z 0', '102 0 b 0'])
  })
})
