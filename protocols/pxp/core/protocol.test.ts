import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { replay } from '../../../lib/protocols/types'
import { type Answer, agentTag } from './agent'
import { type PxpConfig, type PxpMessage, PxpMessageError, type PxpState, pxp, pxpConfig } from './protocol'
import { PXP_TAGS, type PxpSeat, type PxpTag } from './tags'

/** An instance: the rules never read it. */
const INSTANCE = { input: { x: 1 }, prediction: 'y', explanation: 'e' }

const cfg = (c: Partial<PxpConfig> = {}): PxpConfig => pxpConfig.parse(c)
const msg = (seq: number, tag: PxpTag, sender: PxpSeat = seq % 2 ? 'm' : 'h'): PxpMessage => ({
  seq,
  sender,
  tag,
  prediction: 'p',
  explanation: 'e',
})
/** Plays tags in order from message 1. */
const play = (config: PxpConfig, tags: PxpTag[]) =>
  replay(
    pxp,
    config,
    INSTANCE,
    tags.map((t, i) => msg(i + 1, t)),
  )
function errorCode(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    if (e instanceof PxpMessageError) return e.code
    throw e
  }
  return 'accepted'
}

describe('config', () => {
  it('defaults to n = 10, k = 3 and refuses k < 1, n < 1, fractions and unknown keys', () => {
    expect(pxpConfig.parse({})).toEqual({ n: 10, k: 3 })
    expect(pxpConfig.safeParse({ k: 0 }).success).toBe(false)
    expect(pxpConfig.safeParse({ n: 0 }).success).toBe(false)
    expect(pxpConfig.safeParse({ n: 2.5 }).success).toBe(false)
    expect(pxpConfig.safeParse({ n: 10, kk: 3 }).success).toBe(false)
    expect(errorCode(() => pxp.init({ n: 10, k: 0 }, INSTANCE))).toBe('invalid-config')
  })
})

describe('INTERACT for one session', () => {
  it('asks the machine for message 1 with INIT only, then alternates', () => {
    let s = pxp.init(cfg(), INSTANCE)
    expect(pxp.next(s)).toEqual({ done: false, seat: 'm', j: 1, kind: 'turn', allowedTags: ['INIT'] })
    s = pxp.apply(s, msg(1, 'INIT'))
    expect(pxp.next(s)).toEqual({
      done: false,
      seat: 'h',
      j: 2,
      kind: 'turn',
      allowedTags: ['RATIFY', 'REFUTE', 'REVISE'],
    })
    s = pxp.apply(s, msg(2, 'REFUTE'))
    s = pxp.apply(s, msg(3, 'REVISE'))
    expect(pxp.next(s)).toEqual({
      done: false,
      seat: 'h',
      j: 4,
      kind: 'turn',
      allowedTags: ['RATIFY', 'REFUTE', 'REVISE', 'REJECT'],
    })
  })

  it('the footnote session ⟨INIT_m, RATIFY_h, RATIFY_m⟩ stops after 3 messages on mutual RATIFY', () => {
    const s = play(cfg(), ['INIT', 'RATIFY'])
    expect(pxp.next(s).done).toBe(false) // l_m is still INIT
    expect(pxp.next(pxp.apply(s, msg(3, 'RATIFY')))).toEqual({ done: true, reason: 'mutual-ratify' })
  })

  it("uses each agent's latest tag: an earlier RATIFY does not count after a REFUTE", () => {
    let s = play(cfg(), ['INIT', 'RATIFY', 'REFUTE', 'REFUTE', 'RATIFY'])
    expect(s.latest).toEqual({ m: 'RATIFY', h: 'REFUTE' })
    expect(pxp.next(s).done).toBe(false)
    s = pxp.apply(s, msg(6, 'RATIFY'))
    expect(pxp.next(s)).toEqual({ done: true, reason: 'mutual-ratify' })
    expect(s.messages).toHaveLength(6)
  })

  it("a human's REJECT ends the session", () => {
    expect(pxp.next(play(cfg(), ['INIT', 'REFUTE', 'REFUTE', 'REJECT']))).toEqual({
      done: true,
      reason: 'human-reject',
    })
  })

  it("a machine's REJECT ends the session too (paper's Stop rule; the authors' code does not stop)", () => {
    expect(pxp.next(play(cfg(), ['INIT', 'REFUTE', 'REFUTE', 'REFUTE', 'REJECT']))).toEqual({
      done: true,
      reason: 'machine-reject',
    })
  })

  it('stops at the bound: at most n messages', () => {
    const refutes = (count: number): PxpTag[] => ['INIT', ...Array<PxpTag>(count - 1).fill('REFUTE')]
    const s = play(cfg({ n: 10 }), refutes(10))
    expect(pxp.next(s)).toEqual({ done: true, reason: 'bound' })
    expect(errorCode(() => pxp.apply(s, msg(11, 'REFUTE')))).toBe('session-over')
    expect(pxp.next(play(cfg({ n: 1 }), ['INIT']))).toEqual({ done: true, reason: 'bound' })
    expect(pxp.next(play(cfg({ n: 9 }), refutes(8))).done).toBe(false)
  })

  it('records the Stop reason when the last allowed message also stops the session', () => {
    expect(pxp.next(play(cfg({ n: 3 }), ['INIT', 'RATIFY', 'RATIFY']))).toEqual({ done: true, reason: 'mutual-ratify' })
    expect(pxp.next(play(cfg({ n: 4, k: 3 }), ['INIT', 'REFUTE', 'REFUTE', 'REJECT']))).toEqual({
      done: true,
      reason: 'human-reject',
    })
  })

  it('never changes the state it was given', () => {
    const s0 = pxp.init(cfg(), INSTANCE)
    const s1 = pxp.apply(s0, msg(1, 'INIT'))
    expect(s0.messages).toHaveLength(0)
    expect(s0.j).toBe(1)
    expect(s1.instance).toEqual(INSTANCE)
  })
})

describe('apply refuses invalid messages with a typed error', () => {
  const s2 = () => play(cfg({ k: 3 }), ['INIT'])
  it.each([
    ['a skipped message number', () => pxp.apply(s2(), msg(3, 'REFUTE', 'h')), 'wrong-seq'],
    ['a repeated message number', () => pxp.apply(s2(), msg(1, 'INIT', 'm')), 'wrong-seq'],
    ['the wrong sender', () => pxp.apply(s2(), msg(2, 'REFUTE', 'm')), 'wrong-sender'],
    ['a first message that is not INIT', () => pxp.apply(pxp.init(cfg(), INSTANCE), msg(1, 'RATIFY')), 'init-required'],
    ['INIT after message 1', () => pxp.apply(s2(), msg(2, 'INIT')), 'init-not-first'],
    ['REJECT at j = 2 ≤ k', () => pxp.apply(s2(), msg(2, 'REJECT')), 'reject-too-early'],
    ['REJECT at j = k', () => pxp.apply(play(cfg({ k: 3 }), ['INIT', 'REFUTE']), msg(3, 'REJECT')), 'reject-too-early'],
    ['an unknown tag', () => pxp.apply(s2(), { ...msg(2, 'REFUTE'), tag: 'MAYBE' as PxpTag }), 'invalid-message'],
    [
      'a missing explanation',
      () => pxp.apply(s2(), { seq: 2, sender: 'h', tag: 'REFUTE', prediction: 'p' } as PxpMessage),
      'invalid-message',
    ],
    [
      'a message after the end',
      () => pxp.apply(play(cfg(), ['INIT', 'RATIFY', 'RATIFY']), msg(4, 'REFUTE')),
      'session-over',
    ],
  ])('%s', (_name, fn, code) => {
    expect(errorCode(fn)).toBe(code)
  })

  it('accepts REJECT at j = k + 1', () => {
    expect(errorCode(() => pxp.apply(play(cfg({ k: 3 }), ['INIT', 'REFUTE', 'REFUTE']), msg(4, 'REJECT')))).toBe(
      'accepted',
    )
  })
})

/** Model of INTERACT's Stop rule, written from the paper independently of the implementation. */
function expectedDone(tags: PxpTag[], n: number): string | null {
  let lm: PxpTag = 'INIT'
  let lh: PxpTag = 'INIT'
  for (let i = 0; i < tags.length; i++) {
    const j = i + 1
    const t = tags[i]!
    if (j % 2 === 1) lm = t
    else lh = t
    const stop = (lm === 'RATIFY' && lh === 'RATIFY') || (j % 2 === 1 ? lm === 'REJECT' : lh === 'REJECT')
    if (stop || j + 1 > n) return stop ? 'stopped' : 'bound'
  }
  return null
}

describe('properties of INTERACT', () => {
  const configs = fc.record({ n: fc.integer({ min: 1, max: 14 }), k: fc.integer({ min: 1, max: 14 }) })

  it('any play of allowed tags: ≤ n messages, no REJECT at j ≤ k, stops exactly on mutual RATIFY, a REJECT or the bound', () => {
    fc.assert(
      fc.property(configs, fc.array(fc.nat(), { maxLength: 40 }), (config, picks) => {
        let s: PxpState = pxp.init(config, INSTANCE)
        const tags: PxpTag[] = []
        for (const pick of picks) {
          const ask = pxp.next(s)
          if (ask.done) break
          const allowed = ask.allowedTags ?? []
          const tag = allowed[pick % allowed.length]!
          s = pxp.apply(s, msg(ask.j, tag, ask.seat))
          tags.push(tag)
          const after = pxp.next(s)
          // stop right after a REJECT, naming the agent that sent it
          if (tag === 'REJECT')
            expect(after).toEqual({ done: true, reason: ask.seat === 'm' ? 'machine-reject' : 'human-reject' })
          // always stop on mutual RATIFY of the latest tags
          if (s.latest.m === 'RATIFY' && s.latest.h === 'RATIFY')
            expect(after).toEqual({ done: true, reason: 'mutual-ratify' })
          // done exactly when the model says so
          const model = expectedDone(tags, config.n)
          expect(after.done).toBe(model !== null)
          if (model === 'bound') expect(after).toEqual({ done: true, reason: 'bound' })
        }
        expect(s.messages.length).toBeLessThanOrEqual(config.n)
        s.messages.forEach((m, i) => {
          expect(m.seq).toBe(i + 1)
          expect(m.sender).toBe(i % 2 === 0 ? 'm' : 'h')
          if (m.tag === 'REJECT') expect(m.seq).toBeGreaterThan(config.k)
        })
      }),
    )
  })

  it('arbitrary messages, legal or not: a refused one leaves no trace, an accepted log obeys the rules', () => {
    const anyMessage = fc.record({
      seq: fc.integer({ min: 0, max: 16 }),
      sender: fc.constantFrom<PxpSeat>('m', 'h'),
      tag: fc.constantFrom(...PXP_TAGS),
      prediction: fc.constant('p'),
      explanation: fc.constant('e'),
    })
    // bias towards the right number so sessions get long
    const attempt = fc.oneof(anyMessage, fc.record({ tag: fc.constantFrom(...PXP_TAGS) }))
    fc.assert(
      fc.property(configs, fc.array(attempt, { maxLength: 60 }), (config, attempts) => {
        let s: PxpState = pxp.init(config, INSTANCE)
        for (const a of attempts) {
          const m: PxpMessage = 'seq' in a ? a : msg(s.j, a.tag, s.j % 2 ? 'm' : 'h')
          try {
            s = pxp.apply(s, m)
          } catch (e) {
            expect(e).toBeInstanceOf(PxpMessageError)
          }
        }
        const accepted = s.messages
        expect(accepted.length).toBeLessThanOrEqual(config.n)
        for (const m of accepted) {
          if (m.tag === 'REJECT') expect(m.seq).toBeGreaterThan(config.k)
          expect(m.tag === 'INIT').toBe(m.seq === 1)
        }
        // replaying the accepted log gives the same state
        expect(replay(pxp, config, INSTANCE, accepted)).toEqual(s)
        // nothing follows a REJECT or a mutual RATIFY
        const rejectAt = accepted.findIndex((m) => m.tag === 'REJECT')
        if (rejectAt >= 0) expect(rejectAt).toBe(accepted.length - 1)
      }),
    )
  })

  it('Procedure 1 with Procedure 2 agents (random MATCH/AGREE tables) never sends a refused message', () => {
    const answer = fc.record({ y: fc.constantFrom('a', 'b', 'c'), e: fc.constantFrom('x', 'y') })
    const agent = fc.record({ match: fc.func(fc.boolean()), agree: fc.func(fc.boolean()) })
    fc.assert(
      fc.property(
        configs,
        fc.array(answer, { minLength: 14, maxLength: 14 }),
        agent,
        agent,
        (config, answers, am, ah) => {
          let s: PxpState = pxp.init(config, INSTANCE)
          const said: Answer[] = []
          for (;;) {
            const ask = pxp.next(s)
            if (ask.done) break
            const { j } = ask
            const own = answers[j - 1]!
            const { match, agree } = ask.seat === 'm' ? am : ah
            const { tag } = agentTag({
              j,
              k: config.k,
              own,
              ownPrev: said[j - 3],
              partnerPrev: said[j - 2],
              match,
              agree,
            })
            expect(ask.allowedTags).toContain(tag)
            s = pxp.apply(s, { seq: j, sender: ask.seat, tag, prediction: own.y, explanation: own.e })
            said.push(own)
          }
          expect(s.messages.length).toBeLessThanOrEqual(config.n)
        },
      ),
    )
  })
})
