import { describe, expect, it } from 'vitest'
import { bareTripInstance, TRIP_REPROMPTS, tripInstance, truthful } from '../tests/support'
import { isDone, replay } from '../../../lib/protocols/types'
import {
  answererMessage,
  answererPrompt,
  episodeOf,
  gameMaster,
  humanReply,
  parseProbeAnswer,
  parseSlotAnswer,
  playGame,
  type ScorekeepingAsk,
  type ScorekeepingMessage,
  type ScorekeepingState,
  scorekeeping,
} from './index'

const start = (instance = tripInstance()) => scorekeeping.init({}, instance)

/** Steps the game: the game master for the questioner, `reply` for the answerer; stops after `limit` messages. */
function run(
  reply: (ask: ScorekeepingAsk, state: ScorekeepingState) => string,
  state = start(),
  limit = Number.POSITIVE_INFINITY,
): ScorekeepingState {
  let s = state
  while (s.messages.length < limit) {
    const ask = scorekeeping.next(s)
    if (isDone(ask)) break
    s = scorekeeping.apply(s, ask.seat === 'questioner' ? gameMaster(s, ask) : answererMessage(ask, reply(ask, s)))
  }
  return s
}

const ask = (s: ScorekeepingState) => {
  const a = scorekeeping.next(s)
  if (isDone(a)) throw new Error(`done: ${a.reason}`)
  return a
}

describe('parsing a slot answer (starts with ANSWER:, no line break inside)', () => {
  it.each([
    ['ANSWER: Rome', { valid: true, text: 'Rome' }],
    ['ANSWER:Rome', { valid: true, text: 'Rome' }],
    ['ANSWER: Rome.\n', { valid: true, text: 'Rome.' }], // trailing line breaks are stripped first
    ['ANSWER: Rome\r\n', { valid: true, text: 'Rome' }], // only "\n" counts as a line break
    ['\n\nANSWER: Rome', { valid: false, reason: 'tag' }], // must start with the tag
    [' ANSWER: Rome', { valid: false, reason: 'tag' }], // no leading whitespace
    ['answer: Rome', { valid: false, reason: 'tag' }], // case matters
    ['Rome', { valid: false, reason: 'tag' }],
    ['ANSWER: Rome\nand more', { valid: false, reason: 'line-break' }],
    ['ANSWER: I go ANSWER: to Rome', { valid: true, text: 'I go  to Rome' }], // every tag removed
    ['ANSWER:\u3000Rome\u00a0', { valid: true, text: 'Rome' }], // Python's strip()
  ])('%j → %j', (reply, expected) => {
    expect(parseSlotAnswer(reply)).toEqual(expected)
  })
})

describe('parsing a probe answer (ASIDE:, then yes or no first)', () => {
  it.each([
    ['ASIDE: Yes.', 1],
    ['ASIDE: yes, they know', 1],
    ['ASIDE:yes', 1],
    ['ASIDE: No.', 0],
    ['ASIDE: Nope.', 0], // starts with "no"
    ['ASIDE: not yet', 0], // starts with "no"
    ['ASIDE: Yesterday', 1], // starts with "yes": clembench counts it
    ['ASIDE: No.\n\n', 0],
    ['ASIDE: NA', 2],
    ['ASIDE: maybe', 2],
    ['ASIDE: ', 2],
    ['Yes.', 2], // no tag
    [' ASIDE: yes', 2], // leading whitespace
    ['aside: yes', 2],
    ['ASIDE: yes\nbecause I said so', 2], // continues after a line break
    ['ASIDE: I think yes', 2], // yes/no must come first
  ])('%j → %i', (reply, value) => {
    expect(parseProbeAnswer(reply)).toBe(value)
  })
})

describe('the game master', () => {
  it('opens with probing round 0, slot by slot in the probing order, try 1, with the double space', () => {
    const s = start()
    const a = ask(s)
    expect(a).toMatchObject({ seat: 'questioner', kind: 'probe', round: 0, slot: 'from', try: 1, j: 1 })
    expect(gameMaster(s, a)).toEqual({
      seq: 1,
      sender: 'questioner',
      kind: 'probe',
      round: 0,
      slot: 'from',
      try: 1,
      text: 'ME:  Does the agent know from (0)? Answer this question with yes or no and then stop.',
    })
  })

  it('reprompts with the next suffix after ME: while the answer does not parse', () => {
    let s = start()
    const texts: string[] = []
    for (let t = 1; t <= 3; t++) {
      const probe = gameMaster(s, ask(s))
      texts.push(probe.text)
      s = scorekeeping.apply(s, probe)
      s = scorekeeping.apply(s, answererMessage(ask(s), t < 3 ? 'I do not know.' : 'ASIDE: no'))
    }
    expect(texts).toEqual([
      'ME:  Does the agent know from (0)? Answer this question with yes or no and then stop.',
      `ME: ${TRIP_REPROMPTS[1]} Does the agent know from (0)? Answer this question with yes or no and then stop.`,
      `ME: ${TRIP_REPROMPTS[2]} Does the agent know from (0)? Answer this question with yes or no and then stop.`,
    ])
    expect(s.probing[0]!.probes[0]).toMatchObject({ slot: 'from', tries: 3, value: 0, answer: 'ASIDE: no' })
    expect(ask(s)).toMatchObject({ kind: 'probe', round: 0, slot: 'to', try: 1 })
    expect([s.requestCounts[0], s.parsedRequestCounts[0], s.violatedRequestCounts[0]]).toEqual([3, 1, 2])
  })

  it('asks for the slots in the request order, "<TAG>: <request>", each followed by a probing round', () => {
    const s = run(truthful)
    const kinds = s.messages.map((m) => m.kind)
    const round = ['probe', 'probe-answer', 'probe', 'probe-answer', 'probe', 'probe-answer', 'probe', 'probe-answer']
    const probing = [...round, 'probe', 'probe-answer']
    expect(kinds).toEqual([...probing, ...Array.from({ length: 5 }, () => ['request', 'answer', ...probing]).flat()])
    const requests = s.messages.filter((m) => m.kind === 'request')
    expect(requests.map((m) => [m.round, m.slot, m.text])).toEqual([
      [1, 'to', 'AGENT: Tell me to?'],
      [2, 'when', 'AGENT: Tell me when?'],
      [3, 'by', 'AGENT: Tell me by?'],
      [4, 'from', 'AGENT: Tell me from?'],
      [5, 'class', 'AGENT: Tell me class?'],
    ])
    expect(scorekeeping.next(s)).toEqual({ done: true, reason: 'complete' })
    expect(s.messages.map((m) => m.seq)).toEqual(s.messages.map((_, i) => i + 1))
  })

  it('without texts the messages are empty and the game plays all the same', () => {
    const s = run(truthful, start(bareTripInstance()))
    expect(scorekeeping.next(s)).toEqual({ done: true, reason: 'complete' })
    expect(s.messages.filter((m) => m.sender === 'questioner').every((m) => m.text === '')).toBe(true)
  })
})

describe('ground truth and anticipation', () => {
  // turns: to 0, when 1, by 2, from 3, class 4; a probe in round r is 1 iff r > turn
  const order = ['from', 'to', 'by', 'class', 'when']
  const turn: Record<string, number> = { to: 0, when: 1, by: 2, from: 3, class: 4 }

  it('probe ground truth is 1 iff r > the slot’s turn (its place in the request order)', () => {
    const s = run(truthful)
    const gt = s.probing.map((r) => r.probes.map((p) => p.gt))
    // by hand, slots in probing order from, to, by, class, when:
    expect(gt).toEqual([
      [0, 0, 0, 0, 0],
      [0, 1, 0, 0, 0],
      [0, 1, 0, 0, 1],
      [0, 1, 1, 0, 1],
      [1, 1, 1, 0, 1],
      [1, 1, 1, 1, 1],
    ])
    expect(gt).toEqual(s.probing.map((_, r) => order.map((slot) => (r > turn[slot]! ? 1 : 0))))
  })

  it('a value given early moves its slot’s turn to r − 1; an earlier turn never moves', () => {
    const reply = (a: ScorekeepingAsk, s: ScorekeepingState) => {
      if (a.kind === 'answer' && a.round === 1) return 'ANSWER: Rome, by train, leaving from Oslo.'
      if (a.kind === 'answer' && a.round === 2) return 'ANSWER: Tomorrow, and Rome again.'
      return truthful(a, s)
    }
    const s = run(reply)
    expect(s.turns[0]).toMatchObject({
      round: 1,
      slot: 'to',
      parsed: 'Rome, by train, leaving from Oslo.',
      filled: true,
      anticipated: [
        { slot: 'from', from: 3, to: 0 },
        { slot: 'by', from: 2, to: 0 },
      ],
    })
    expect(s.turns[1]).toMatchObject({ round: 2, slot: 'when', filled: true, anticipated: [] })
    // round 1: from, to and by are shared now
    expect(s.probing[1]!.probes.map((p) => p.gt)).toEqual([1, 1, 1, 0, 0])
    expect(s.gtTurn).toEqual([0, 0, 0, 4, 1]) // from, to, by, class, when
  })

  it('a wrong value does not fill the slot but the game goes on', () => {
    const s = run((a, st) => (a.kind === 'answer' && a.round === 3 ? 'ANSWER: By plane.' : truthful(a, st)))
    expect(s.turns.map((t) => t.filled)).toEqual([true, true, false, true, true])
    expect(scorekeeping.next(s)).toEqual({ done: true, reason: 'complete' })
  })
})

describe('aborting', () => {
  it('a probe still invalid after the 5th try aborts in that round, which is not played', () => {
    const reply = (a: ScorekeepingAsk, s: ScorekeepingState) =>
      a.kind === 'probe-answer' && a.round === 2 && a.slot === 'to' ? 'ASIDE: Perhaps.' : truthful(a, s)
    const s = run(reply)
    expect(scorekeeping.next(s)).toEqual({ done: true, reason: 'aborted-probe' })
    const last = s.messages.at(-1)!
    expect(last).toMatchObject({ kind: 'probe-answer', round: 2, slot: 'to', try: 5 })
    expect(s.probing.map((r) => r.played)).toEqual([true, true, false])
    expect(s.probing[2]!.probes.map((p) => p.value)).toEqual([0, 2, null, null, null])
    // round 2: the answer, one valid probe, five invalid tries
    expect([s.requestCounts[2], s.parsedRequestCounts[2], s.violatedRequestCounts[2]]).toEqual([7, 2, 5])
    expect(() =>
      scorekeeping.apply(s, {
        seq: s.messages.length + 1,
        sender: 'questioner',
        kind: 'request',
        round: 3,
        slot: 'by',
        text: 'AGENT: Tell me by?',
      }),
    ).toThrow(/The game is over \(aborted-probe\)/)
  })

  it('a probe valid on the 5th try goes on', () => {
    let tries = 0
    const s = run((a, st) => {
      if (a.kind === 'probe-answer' && a.round === 0 && a.slot === 'by') return ++tries < 5 ? 'no' : 'ASIDE: no'
      return truthful(a, st)
    })
    expect(scorekeeping.next(s)).toEqual({ done: true, reason: 'complete' })
    expect(s.probing[0]!.probes[2]).toMatchObject({ tries: 5, value: 0 })
  })

  it.each([
    ['without the tag', 'Rome'],
    ['after a line break', 'ANSWER: Rome\nWhat else?'],
  ])('a slot answer %s aborts the game (the README), with no probing round after it', (_, bad) => {
    const s = run((a, st) => (a.kind === 'answer' && a.round === 2 ? bad : truthful(a, st)))
    expect(scorekeeping.next(s)).toEqual({ done: true, reason: 'aborted-answer' })
    expect(s.messages.at(-1)).toMatchObject({ kind: 'answer', round: 2, text: bad })
    expect(s.probing).toHaveLength(2)
    expect(s.turns.map((t) => t.parsed)).toEqual(['Rome.', null])
    expect([s.requestCounts[2], s.parsedRequestCounts[2], s.violatedRequestCounts[2]]).toEqual([1, 0, 1])
    expect(episodeOf(s)).toMatchObject({ aborted: true, playedProbeRounds: 2, filledSlots: [true] })
  })
})

describe('apply refuses what the rules do not allow', () => {
  const s0 = start()
  const probe = gameMaster(s0, ask(s0))
  it.each<[string, unknown, RegExp]>([
    ['a wrong number', { ...probe, seq: 2 }, /Expected message 1, got 2/],
    [
      'the answerer first',
      { seq: 1, sender: 'answerer', kind: 'answer', round: 1, text: 'ANSWER: x' },
      /should be the questioner's probe of "from"/,
    ],
    ['another slot', { ...probe, slot: 'to' }, /should be/],
    ['another try', { ...probe, try: 2 }, /should be/],
    [
      'another text',
      { ...probe, text: 'ME: Do you like Rome?' },
      /the game master says "ME: {2}Does the agent know from \(0\)\?/,
    ],
    ['no text', { seq: 1, sender: 'questioner', kind: 'probe', round: 0, slot: 'from', try: 1 }, /text/],
    ['an unknown kind', { seq: 1, sender: 'questioner', kind: 'chat', text: '' }, /Message 1/],
  ])('%s', (_, msg, error) => {
    expect(() => scorekeeping.apply(s0, msg as ScorekeepingMessage)).toThrow(error)
  })

  it('an instance that is not a game', () => {
    const bad = tripInstance({ requestOrder: ['to', 'when', 'by', 'from'] })
    expect(() => scorekeeping.init({}, bad)).toThrow(/requestOrder must name every slot once/)
    expect(() => scorekeeping.init({}, tripInstance({ probes: [] }))).toThrow(/n \+ 1 = 6 probing rounds/)
    expect(() => scorekeeping.init({ extra: 1 } as never, tripInstance())).toThrow(/config/)
  })
})

describe('what the answerer sees', () => {
  it('probing round 0: the initial prompt, the fake "Ok.", then the probe', () => {
    let s = start()
    s = scorekeeping.apply(s, gameMaster(s, ask(s)))
    expect(answererPrompt(s, ask(s))).toEqual([
      { role: 'user', content: 'You are travelling.\n\nWHAT: Travel\nFROM: Oslo' },
      { role: 'assistant', content: 'Ok.' },
      {
        role: 'user',
        content: 'ME:  Does the agent know from (0)? Answer this question with yes or no and then stop.',
      },
    ])
  })

  it('the real dialogue so far, never the probes; the current request or probe last', () => {
    // stop right after the request of round 2 (10 messages of round 0, 12 of round 1, 1 request)
    const s = run(truthful, start(), 23)
    const a = ask(s)
    expect(a).toMatchObject({ seat: 'answerer', kind: 'answer', round: 2, slot: 'when' })
    const dialogue = [
      { role: 'user', content: 'You are travelling.\n\nWHAT: Travel\nFROM: Oslo' },
      { role: 'assistant', content: 'Ok.' },
      { role: 'user', content: 'AGENT: Tell me to?' },
      { role: 'assistant', content: 'ANSWER: Rome.' },
      { role: 'user', content: 'AGENT: Tell me when?' },
    ]
    expect(answererPrompt(s, a)).toEqual(dialogue)
    // the probes of round 2 see the answer of round 2 and then only their own question
    const after = run(truthful, s, 25)
    expect(answererPrompt(after, ask(after))).toEqual([
      ...dialogue,
      { role: 'assistant', content: 'ANSWER: Tomorrow.' },
      {
        role: 'user',
        content: 'ME:  Does the agent know from (2)? Answer this question with yes or no and then stop.',
      },
    ])
  })

  it('needs the texts', () => {
    let s = start(bareTripInstance())
    s = scorekeeping.apply(s, gameMaster(s, ask(s)))
    expect(() => answererPrompt(s, ask(s))).toThrow(/no initial prompt/)
    expect(() => answererPrompt(start(), ask(start()))).toThrow(/not asked/)
  })
})

describe('a person’s replies get the tags added', () => {
  it.each<['answer' | 'probe-answer', string | boolean, string]>([
    ['answer', 'Rome', 'ANSWER: Rome'],
    ['answer', '  to Rome, please ', 'ANSWER: to Rome, please'],
    ['probe-answer', 'yes', 'ASIDE: yes'],
    ['probe-answer', 'No', 'ASIDE: no'],
    ['probe-answer', true, 'ASIDE: yes'],
    ['probe-answer', false, 'ASIDE: no'],
  ])('%s %j → %j', (kind, input, text) => {
    expect(humanReply(kind, input)).toBe(text)
    if (kind === 'answer') expect(parseSlotAnswer(text).valid).toBe(true)
    else expect(parseProbeAnswer(text)).toBe(text.endsWith('yes') ? 1 : 0)
  })

  it.each<['answer' | 'probe-answer', string | boolean, RegExp]>([
    ['answer', 'Rome\nand Oslo', /one line/],
    ['answer', 'Rome\r', /one line/],
    ['answer', '   ', /empty/],
    ['probe-answer', 'maybe', /yes or no/],
  ])('refuses %s %j', (kind, input, error) => {
    expect(() => humanReply(kind, input)).toThrow(error)
  })
})

/** Every object's keys in reverse order, as PostgreSQL jsonb may hand them back. */
function scrambleKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scrambleKeys)
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, scrambleKeys(x)]),
    )
  return v
}

describe('replay', () => {
  it('the state is the fold of the stored messages, whatever the key order of the stored JSON', () => {
    const played = playGame(tripInstance(), truthful)
    const stored = scrambleKeys(JSON.parse(JSON.stringify(played.messages))) as ScorekeepingMessage[]
    const instance = scrambleKeys(JSON.parse(JSON.stringify(tripInstance()))) as ReturnType<typeof tripInstance>
    const replayed = replay(scorekeeping, {}, instance, stored)
    expect(replayed.probing).toEqual(played.probing)
    expect(replayed.turns).toEqual(played.turns)
    expect(episodeOf(replayed)).toEqual(episodeOf(played))
    // the same game master messages come out of the scrambled instance
    expect(playGame(instance, truthful).messages).toEqual(played.messages)
  })

  it('the truthful helper answers every probe with its ground truth', () => {
    const s = playGame(tripInstance(), truthful)
    expect(s.probing.every((r) => r.probes.every((p) => p.value === p.gt))).toBe(true)
  })
})
