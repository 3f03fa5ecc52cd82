/**
 * A toy protocol written only for the engine's contract suite: "guess the number". The guesser (an
 * LLM or a person) guesses; the oracle (a program) answers higher, lower or correct. The session ends
 * when the guess is right or after `maxGuesses`. Pure, like every protocol: nothing here knows the
 * engine, and nothing outside this folder knows the toy (the suite registers its plugin at run time).
 */
import { z } from 'zod'
import { type Ask, type Done, type Protocol, ProtocolError } from '@/lib/protocols/types'

export const toyConfig = z.object({ maxGuesses: z.number().int().min(1).max(20).default(6) })
export const toyInstance = z.object({ target: z.number().int().min(1).max(100) })
export const toyMessage = z.discriminatedUnion('kind', [
  z.object({
    seq: z.number().int().min(1),
    sender: z.literal('guesser'),
    kind: z.literal('guess'),
    value: z.number().int().min(1).max(100),
  }),
  z.object({
    seq: z.number().int().min(1),
    sender: z.literal('oracle'),
    kind: z.literal('hint'),
    hint: z.enum(['higher', 'lower', 'correct']),
  }),
])
export type ToyMessage = z.output<typeof toyMessage>
export type ToyConfig = z.output<typeof toyConfig>
export type ToyInstance = z.output<typeof toyInstance>

export interface ToyState {
  config: ToyConfig
  instance: ToyInstance
  messages: ToyMessage[]
}

type ToyAsk = Ask<'guesser' | 'oracle', string, 'guess' | 'hint'>

function next(s: ToyState): ToyAsk | Done<'found' | 'out-of-guesses'> {
  const last = s.messages.at(-1)
  const j = s.messages.length + 1
  if (last?.kind === 'hint' && last.hint === 'correct') return { done: true, reason: 'found' }
  const guesses = s.messages.filter((m) => m.kind === 'guess').length
  if (last?.kind === 'guess') return { done: false, seat: 'oracle', j, kind: 'hint' }
  if (guesses >= s.config.maxGuesses) return { done: true, reason: 'out-of-guesses' }
  return { done: false, seat: 'guesser', j, kind: 'guess' }
}

function apply(s: ToyState, raw: ToyMessage): ToyState {
  const m = toyMessage.parse(raw)
  const ask = next(s)
  if (ask.done) throw new ProtocolError('toy', 'over', 'The game is over.')
  if (m.seq !== ask.j || m.sender !== ask.seat)
    throw new ProtocolError('toy', 'out-of-turn', `Expected ${ask.seat} at ${ask.j}.`)
  if (m.kind === 'hint') {
    const guess = s.messages.at(-1)
    const truth =
      guess?.kind === 'guess'
        ? guess.value === s.instance.target
          ? 'correct'
          : guess.value < s.instance.target
            ? 'higher'
            : 'lower'
        : null
    if (m.hint !== truth) throw new ProtocolError('toy', 'lying-oracle', `The oracle must say ${truth}.`)
  }
  return { ...s, messages: [...s.messages, m] }
}

export const toy: Protocol<ToyConfig, ToyState, ToyMessage, ToyInstance, ToyAsk, Done<string>> = {
  id: 'toy',
  version: '1',
  label: 'Guess the number (test toy)',
  config: toyConfig,
  message: toyMessage,
  instance: toyInstance,
  seats: [
    { name: 'guesser', label: 'Guesser', kinds: ['llm', 'human'] },
    { name: 'oracle', label: 'Oracle', kinds: ['program'], programs: ['compare'] },
  ],
  init: (config, instance) => ({ config, instance, messages: [] }),
  next,
  apply,
}
