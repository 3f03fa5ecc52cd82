import { z } from 'zod'
import {
  answererMessage,
  answererPrompt,
  gameMaster,
  humanReply,
  ScorekeepingError,
  type ScorekeepingMessage,
  scorekeeping,
} from '@/protocols/scorekeeping/core'
import { badRequest, definePlugin, type HumanContext } from '@/lib/server/sdk'
import { scorekeepingDemo } from '@/protocols/scorekeeping/server/demo'

/**
 * The clembench scorekeeping game ("privateshared", seed 004) on the engine: the questioner is the
 * game master program, the answerer an LLM or a person. The answerer's chat is clembench's (the initial
 * prompt and a fake "Ok.", then the real dialogue; a probe is a side question that never enters it).
 * A reply is taken as it is: parsing, retries with the reprompt suffixes and aborts are the game's
 * rules, applied by the protocol when the reply is appended. This entry holds what a worker needs to
 * play a game; set-up, results, exports, the demo seed and the import are modules loaded on first use.
 */
/** A person's turn: a one-line answer to a request, or yes/no to a side question. */
export const ScorekeepingTurnInput = z.object({
  reply: z.string().max(2000).optional(),
  answer: z.enum(['yes', 'no']).optional(),
})

function turnMessage(ctx: HumanContext<typeof scorekeeping>, input: z.output<typeof ScorekeepingTurnInput>) {
  const kind = ctx.ask.kind
  if (kind !== 'answer' && kind !== 'probe-answer') throw badRequest('It is not the answerer’s turn.')
  try {
    const text =
      kind === 'answer'
        ? humanReply('answer', input.reply ?? '', ctx.state.instance.words)
        : humanReply('probe-answer', input.answer ?? input.reply ?? '', ctx.state.instance.words)
    return { message: answererMessage(ctx.ask, text), meta: { audit: { kind, round: ctx.ask.round } } }
  } catch (err) {
    if (err instanceof ScorekeepingError)
      throw badRequest(err.message, { [kind === 'answer' ? 'reply' : 'answer']: [err.message] })
    throw err
  }
}

export const scorekeepingPlugin = definePlugin(scorekeeping, {
  sessionConfig: (raw) => ({ config: scorekeeping.config.parse(raw ?? {}), extras: {} }),
  agents: {
    program: {
      async 'game-master'(ctx) {
        return { message: gameMaster(ctx.state, ctx.ask), context: { program: 'game-master' } }
      },
    },
    async llm(ctx) {
      if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
      const messages = answererPrompt(ctx.state, ctx.ask)
      const r = await ctx.llm.chat(
        ctx.fill.model,
        { messages },
        { purpose: `scorekeeping-${ctx.ask.kind}`, stream: ctx.watched },
      )
      return { message: answererMessage(ctx.ask, r.text), context: messages, callId: r.callId }
    },
  },
  human: { input: ScorekeepingTurnInput, toMessage: turnMessage },
  project: (m: ScorekeepingMessage) => ({
    receiver: m.sender === 'questioner' ? 'answerer' : 'questioner',
    label: m.kind,
    value: m.text.slice(0, 500),
  }),
  projectionNames: { label: 'kind', value: 'text' },
  // A session runs on the game instance itself (the instance's input is clembench's instance object).
  setup: () =>
    import('@/protocols/scorekeeping/server/setup').then((m) => ({
      options: m.ScorekeepingRunOptions,
      plan: m.planScorekeeping,
      legacy: { input: m.ScorekeepingSetupInput, toRun: m.scorekeepingLegacyToRun },
      fromForm: m.scorekeepingSetupFromForm,
      snapshot: (row) => row.input,
    })),
  views: () =>
    import('@/protocols/scorekeeping/server/results').then((m) => ({
      session: m.scorekeepingSessionView,
      run: m.scorekeepingRunView,
      dashboard: (runId: string) => m.scorekeepingDashboard(runId),
    })),
  exports: () =>
    import('@/protocols/scorekeeping/server/results').then((m) => ({
      tables: m.scorekeepingExports,
      files: m.scorekeepingFiles,
    })),
  seed: () => import('@/protocols/scorekeeping/server/seed').then((m) => ({ seedDemo: m.seedScorekeepingDemo })),
  demo: scorekeepingDemo,
  ops: () =>
    import('@/protocols/scorekeeping/server/import').then((m) => ({
      datasets: m.scorekeepingDatasets,
      operations: [m.importClembench],
      rest: m.scorekeepingRest,
    })),
  title: (instance) => `${instance.experiment ?? 'game'} #${instance.gameId ?? '?'}`,
})
