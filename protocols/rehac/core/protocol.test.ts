import { describe, expect, it } from 'vitest'
import { isDone, replay } from '../../../lib/protocols/types'
import {
  choicePath,
  type RehacInstance,
  type RehacMessage,
  type RehacState,
  RehacError,
  rehac,
  stepCounts,
} from './protocol'

const qa: RehacInstance = { id: 'q1', kind: 'qa', question: 'Who wrote the ledger?', answer: 'Mara Voss' }
const sql: RehacInstance = { id: 's1', kind: 'sql', question: 'How many books?', answer: 'SELECT count(*) FROM book' }

/** Messages of a QA episode: one (solver, action, observation) per step, decisions numbered in. */
function episode(
  steps: Array<{ solver: 'agent' | 'human'; type: 'search' | 'lookup' | 'finish'; arg: string; obs: string }>,
): RehacMessage[] {
  const out: RehacMessage[] = []
  steps.forEach((s, i) => {
    const t = i + 1
    out.push({ seq: out.length + 1, sender: 'decider', kind: 'decide', t, solver: s.solver, pHuman: 0.5 })
    out.push({
      seq: out.length + 1,
      sender: s.solver,
      kind: 'step',
      t,
      thought: `thinking ${t}`,
      action: { type: s.type, arg: s.arg },
      suggestion: null,
      ms: null,
    })
    out.push({
      seq: out.length + 1,
      sender: 'environment',
      kind: 'observation',
      t,
      text: s.obs,
      finished: s.type === 'finish',
    })
  })
  return out
}

const play = (instance: RehacInstance, messages: RehacMessage[], threshold?: number) =>
  replay(rehac, threshold ? { threshold } : {}, instance, messages)

describe('a ReHAC episode', () => {
  it('asks decider, the chosen solver, then the environment, step by step, and ends on Finish', () => {
    let s: RehacState = rehac.init({}, qa)
    expect(s.threshold).toBe(7)
    expect(rehac.next(s)).toMatchObject({ done: false, seat: 'decider', kind: 'decide', j: 1, t: 1 })
    const msgs = episode([
      { solver: 'agent', type: 'search', arg: 'Ledger', obs: 'The ledger was written by Mara Voss.' },
      { solver: 'human', type: 'finish', arg: 'Mara Voss', obs: 'Episode finished' },
    ])
    s = rehac.apply(s, msgs[0] as RehacMessage)
    expect(rehac.next(s)).toMatchObject({ seat: 'agent', kind: 'step', j: 2, t: 1 })
    s = rehac.apply(s, msgs[1] as RehacMessage)
    expect(rehac.next(s)).toMatchObject({ seat: 'environment', kind: 'observation', j: 3, action: { type: 'search' } })
    s = rehac.apply(s, msgs[2] as RehacMessage)
    s = rehac.apply(s, msgs[3] as RehacMessage)
    // Step 2 was decided for the human: the human seat is asked, not the agent.
    expect(rehac.next(s)).toMatchObject({ seat: 'human', kind: 'step', t: 2 })
    s = msgs.slice(4).reduce(rehac.apply, s)
    const end = rehac.next(s)
    expect(isDone(end) && end.reason).toBe('finished')
    expect(s.answer).toBe('Mara Voss')
    expect(choicePath(s)).toBe('01')
    expect(stepCounts(s)).toEqual({ human: 1, steps: 2 })
  })

  it('is force-finished with an empty answer after the threshold step', () => {
    const steps = Array.from({ length: 3 }, (_, i) => ({
      solver: (i % 2 ? 'human' : 'agent') as 'agent' | 'human',
      type: 'search' as const,
      arg: `page ${i}`,
      obs: 'Could not find it.',
    }))
    const s = play(qa, episode(steps), 3)
    const end = rehac.next(s)
    expect(isDone(end) && end.reason).toBe('threshold')
    expect(s.answer).toBe('')
    expect(choicePath(s)).toBe('010')
    // One more message is refused: the episode is over.
    expect(() =>
      rehac.apply(s, { seq: 10, sender: 'decider', kind: 'decide', t: 4, solver: 'agent', pHuman: null }),
    ).toThrow(/over/)
  })

  it('takes the per-kind default threshold (yes/no 5, SQL 8)', () => {
    expect(rehac.init({}, { ...qa, kind: 'yesno' }).threshold).toBe(5)
    expect(rehac.init({}, sql).threshold).toBe(8)
    expect(rehac.init({ threshold: 2 }, sql).threshold).toBe(2)
  })

  it('refuses a step by the seat that was not chosen, a wrong number, and an action of the other task kind', () => {
    const [decide] = episode([{ solver: 'agent', type: 'search', arg: 'x', obs: '' }])
    const s = rehac.apply(rehac.init({}, qa), decide as RehacMessage)
    const step = (over: Partial<Extract<RehacMessage, { kind: 'step' }>>) =>
      ({
        seq: 2,
        sender: 'agent',
        kind: 'step',
        t: 1,
        thought: 'x',
        action: { type: 'search', arg: 'x' },
        suggestion: null,
        ms: null,
        ...over,
      }) as RehacMessage
    const code = (m: RehacMessage) => {
      try {
        rehac.apply(s, m)
      } catch (e) {
        return e instanceof RehacError ? e.code : 'other'
      }
      return 'accepted'
    }
    expect(code(step({}))).toBe('accepted')
    expect(code(step({ sender: 'human' }))).toBe('out-of-turn')
    expect(code(step({ seq: 3 }))).toBe('wrong-seq')
    expect(code(step({ t: 2 }))).toBe('wrong-step')
    expect(code(step({ action: { type: 'sql', arg: 'SELECT 1' } }))).toBe('invalid-action')
    expect(code(step({ action: { type: 'search', arg: '   ' } }))).toBe('invalid-action')
    // Only a person's step records a suggestion or a time.
    expect(code(step({ suggestion: 'opened' }))).toBe('invalid-message')
    expect(code({ seq: 2, sender: 'environment', kind: 'observation', t: 1, text: 'x', finished: false })).toBe(
      'out-of-turn',
    )
  })

  it('keeps the observation honest about the end: Finish must end, Search may not', () => {
    const m = episode([{ solver: 'agent', type: 'finish', arg: 'Mara', obs: 'done' }])
    const s = m.slice(0, 2).reduce(rehac.apply, rehac.init({}, qa))
    expect(() => rehac.apply(s, { ...(m[2] as RehacMessage), finished: false } as RehacMessage)).toThrow(
      /ends the episode/,
    )
    const m2 = episode([{ solver: 'agent', type: 'search', arg: 'Mara', obs: 'x' }])
    const s2 = m2.slice(0, 2).reduce(rehac.apply, rehac.init({}, qa))
    expect(() => rehac.apply(s2, { ...(m2[2] as RehacMessage), finished: true } as RehacMessage)).toThrow(
      /does not end/,
    )
  })

  it('SQL: statements without Thought; submit hands in the last statement; a matching result may end it', () => {
    const msgs: RehacMessage[] = [
      { seq: 1, sender: 'decider', kind: 'decide', t: 1, solver: 'human', pHuman: null },
      {
        seq: 2,
        sender: 'human',
        kind: 'step',
        t: 1,
        thought: null,
        action: { type: 'sql', arg: 'SELECT count(*) FROM book' },
        suggestion: 'copied',
        ms: 5300,
      },
      { seq: 3, sender: 'environment', kind: 'observation', t: 1, text: '[(12,)]', finished: false },
      { seq: 4, sender: 'decider', kind: 'decide', t: 2, solver: 'agent', pHuman: 0.2 },
      {
        seq: 5,
        sender: 'agent',
        kind: 'step',
        t: 2,
        thought: null,
        action: { type: 'submit', arg: '' },
        suggestion: null,
        ms: null,
      },
      { seq: 6, sender: 'environment', kind: 'observation', t: 2, text: 'submitted', finished: true },
    ]
    const s = play(sql, msgs)
    expect(s.answer).toBe('SELECT count(*) FROM book')
    expect(s.steps[0]).toMatchObject({ solver: 'human', suggestion: 'copied', ms: 5300 })
    expect(s.steps[1]?.pHuman).toBe(0.2)
    // A statement whose result is the gold one may end the episode (the environment says so).
    const matched = play(sql, [...msgs.slice(0, 2), { ...(msgs[2] as RehacMessage), finished: true } as RehacMessage])
    expect(matched.reason).toBe('finished')
    expect(matched.answer).toBe('SELECT count(*) FROM book')
    // A Thought on a SQL step is refused.
    const bad = { ...(msgs[1] as RehacMessage), thought: 'I count' } as RehacMessage
    expect(() => play(sql, [msgs[0] as RehacMessage, bad])).toThrow(/no Thought/)
  })

  it('refuses a config or a task that does not parse', () => {
    expect(() => rehac.init({ threshold: 0 }, qa)).toThrow(RehacError)
    expect(() => rehac.init({}, { ...qa, kind: 'chess' as 'qa' })).toThrow(/Invalid ReHAC task/)
  })
})
