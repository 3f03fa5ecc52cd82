import type { ScorekeepingAsk, ScorekeepingInstanceInput, ScorekeepingState } from '@/protocols/scorekeeping/core'

/**
 * A hand-made 5-slot game (not clembench's data): request order to, when, by, from, class, so the
 * ground-truth turns are to 0, when 1, by 2, from 3, class 4. Probing round r has r "yes" slots.
 */
export const TRIP_SLOTS = [
  { name: 'from', value: 'Oslo' },
  { name: 'to', value: 'Rome' },
  { name: 'by', value: 'Train' },
  { name: 'class', value: 'Economy' },
  { name: 'when', value: 'Tomorrow' },
]

export const TRIP_REPROMPTS = ['', 'Be careful.', 'Follow the rules.', 'Be specific.', 'Think.']

export function tripInstance(over: Partial<ScorekeepingInstanceInput> = {}): ScorekeepingInstanceInput {
  const names = TRIP_SLOTS.map((s) => s.name)
  return {
    experiment: 'test-trip',
    gameId: 7,
    tag: 'AGENT',
    slots: TRIP_SLOTS,
    requestOrder: ['to', 'when', 'by', 'from', 'class'],
    requests: names.map((slot, i) => ({ slot, index: i % 2, text: `Tell me ${slot}?` })),
    probes: Array.from({ length: names.length + 1 }, (_, r) =>
      names.map((slot) => ({ slot, index: r % 3, question: `Does the agent know ${slot} (${r})?` })),
    ),
    initialPrompt: 'You are travelling.\n\nWHAT: Travel\nFROM: Oslo',
    reprompts: TRIP_REPROMPTS,
    ...over,
  }
}

/** The same game without any text: what a bare clembench instance object gives. */
export function bareTripInstance(): ScorekeepingInstanceInput {
  const t = tripInstance()
  return {
    tag: t.tag,
    slots: t.slots,
    requestOrder: t.requestOrder,
    requests: t.requests.map(({ slot, index }) => ({ slot, index })),
    probes: t.probes.map((round) => round.map(({ slot, index }) => ({ slot, index }))),
  }
}

/** The ground truth of the probe the answerer is asked about. */
export function probeTruth(state: ScorekeepingState, ask: ScorekeepingAsk): 0 | 1 {
  return state.probing[ask.round]!.probes.find((p) => p.slot === (ask as { slot: string }).slot)!.gt
}

/** A perfect answerer: the requested value, and the true answer to every probe. */
export function truthful(ask: ScorekeepingAsk, state: ScorekeepingState): string {
  if (ask.kind === 'answer') return `ANSWER: ${state.instance.slots.find((s) => s.name === ask.slot)!.value}.`
  return probeTruth(state, ask) ? 'ASIDE: Yes.' : 'ASIDE: No.'
}

export type Reply = (ask: ScorekeepingAsk & { seat: 'answerer' }, state: ScorekeepingState) => string

/**
 * Hand-made trip games (experiment "test-trip", game ids 0 … 5) and how the answerer plays each: every
 * way an episode ends, and the game's bookkeeping (retries, anticipation, wrong probes) on the way.
 */
export const SCRIPTED_GAMES: Array<{ what: string; instance: ScorekeepingInstanceInput; reply: Reply }> = [
  { what: 'perfect', instance: tripInstance({ gameId: 0 }), reply: truthful },
  {
    what: 'anticipates a slot, a probe needs a second try',
    instance: tripInstance({ gameId: 1 }),
    reply: (ask, state) => {
      // the answer to "to" (round 1) also gives "when": its ground truth turn moves from 1 to 0
      if (ask.kind === 'answer' && ask.round === 1) return 'ANSWER: Rome, Tomorrow.'
      if (ask.kind === 'probe-answer' && ask.round === 2 && ask.slot === 'by' && ask.try === 1) return 'ASIDE: maybe'
      return truthful(ask, state)
    },
  },
  {
    what: 'aborted: a probe invalid after every try (round 2)',
    instance: tripInstance({ gameId: 2 }),
    reply: (ask, state) =>
      ask.kind === 'probe-answer' && ask.round === 2 && ask.slot === 'to'
        ? 'I would rather not say.'
        : truthful(ask, state),
  },
  {
    what: 'aborted: a slot answer without its tag (round 3)',
    instance: tripInstance({ gameId: 3 }),
    reply: (ask, state) => (ask.kind === 'answer' && ask.round === 3 ? 'By train.' : truthful(ask, state)),
  },
  {
    what: 'aborted in probing round 0',
    instance: tripInstance({ gameId: 4 }),
    reply: (ask, state) => (ask.kind === 'probe-answer' && ask.round === 0 ? 'ASIDE:\nno' : truthful(ask, state)),
  },
  {
    what: 'says no to every probe, one slot value wrong',
    instance: tripInstance({ gameId: 5 }),
    reply: (ask, state) => {
      if (ask.kind === 'answer') return ask.slot === 'class' ? 'ANSWER: Business.' : truthful(ask, state)
      return probeTruth(state, ask) === 1 && ask.round === 5 ? 'ASIDE: Yes' : 'ASIDE: no'
    },
  },
]
