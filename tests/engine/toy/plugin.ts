import { z } from 'zod'
import { definePlugin } from '@/lib/server/engine/plugin'

import { type ToyMessage, toy } from './protocol'

/** The toy's plugin: an LLM guesser that reads the hints so far, a program oracle, a person's guess. */
export const toyPlugin = definePlugin(toy, {
  agents: {
    async llm(ctx) {
      if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
      const hints = ctx.state.messages
        .map((m) => (m.kind === 'guess' ? `I guessed ${m.value}.` : `Hint: ${m.hint}.`))
        .join(' ')
      const messages = [
        { role: 'system' as const, content: 'Guess the number between 1 and 100. Answer with the number only.' },
        { role: 'user' as const, content: `Game so far: ${hints || 'nothing yet'}. Your guess?` },
      ]
      const r = await ctx.llm.ask(
        ctx.fill.model,
        { messages },
        {
          parse: (text) => {
            const n = Number(text.trim())
            return Number.isInteger(n) && n >= 1 && n <= 100
              ? { ok: true, value: n }
              : { ok: false, error: 'Answer with a whole number from 1 to 100.' }
          },
        },
        { purpose: 'toy-guess', stream: ctx.watched },
      )
      return {
        message: { seq: ctx.ask.j, sender: 'guesser', kind: 'guess', value: r.value } satisfies ToyMessage,
        context: messages,
        meta: { raw: r.text },
        callId: r.callId,
      }
    },
    program: {
      async compare(ctx) {
        const guess = ctx.state.messages.at(-1)
        const target = ctx.instance.target
        const value = guess?.kind === 'guess' ? guess.value : 0
        const hint = value === target ? 'correct' : value < target ? 'higher' : 'lower'
        return { message: { seq: ctx.ask.j, sender: 'oracle', kind: 'hint', hint } satisfies ToyMessage }
      },
    },
  },
  human: {
    input: z.object({ value: z.coerce.number().int().min(1, 'From 1 to 100.').max(100, 'From 1 to 100.') }),
    toMessage: (ctx, input: { value: number }) => ({
      message: { seq: ctx.ask.j, sender: 'guesser', kind: 'guess', value: input.value } satisfies ToyMessage,
    }),
  },
  project: (m: ToyMessage) => ({
    receiver: m.sender === 'guesser' ? 'oracle' : 'guesser',
    tag: m.kind,
    prediction: m.kind === 'guess' ? String(m.value) : m.hint,
  }),
  // The one run-create shape: the guesser's fill, the toy's config ({ maxGuesses }); the oracle is its
  // only program, filled by the engine.
  setup: {
    async plan(_actor, _studyId, input, tools) {
      const ds = await tools.dataset(input.datasetId ?? '')
      return {
        name: input.name,
        task: 'numbers',
        datasetId: ds.id,
        config: input.config,
        seats: input.seats,
        repetitions: input.repetitions,
        seatCycle: input.seatCycle,
      }
    },
    snapshot: (row) => row.input,
  },
  views: { session: (ctx) => ({ hints: ctx.state.messages.length }) },
  title: (instance) => `number ${instance.target ?? '?'}`,
})
