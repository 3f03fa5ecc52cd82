import { z } from 'zod'
import {
  answererMessage,
  answererPrompt,
  gameMaster,
  humanReply,
  type ScorekeepingAsk,
  ScorekeepingError,
  type ScorekeepingMessage,
  type ScorekeepingState,
  scorekeeping,
} from '@/lib/protocols/scorekeeping'
import { badRequest } from '@/lib/server/errors'
import type { ChatMessage } from '@/lib/server/engine/llm'
import type { AgentContext, HumanContext, ProtocolPlugin } from '@/lib/server/engine/plugin'
import { scorekeepingDemo } from '@/lib/server/protocols/scorekeeping/demo'
import { importClembench, scorekeepingDatasets } from '@/lib/server/protocols/scorekeeping/import'
import {
  scorekeepingDashboard,
  scorekeepingExports,
  scorekeepingFiles,
  scorekeepingRunView,
  scorekeepingSessionView,
} from '@/lib/server/protocols/scorekeeping/results'
import {
  planScorekeeping,
  ScorekeepingRunOptions,
  ScorekeepingSetupInput,
  scorekeepingLegacyToRun,
  scorekeepingSetupFromForm,
} from '@/lib/server/protocols/scorekeeping/setup'
import { seedScorekeepingDemo } from '@/lib/server/protocols/scorekeeping/seed'

/**
 * The clembench scorekeeping game ("privateshared", seed 004) on the engine: the questioner is the
 * game master program, the answerer an LLM or a person. The answerer's chat is clembench's (the initial
 * prompt and a fake "Ok.", then the real dialogue; a probe is a side question that never enters it).
 * A reply is taken as it is: parsing, retries with the reprompt suffixes and aborts are the game's
 * rules, applied by the protocol when the reply is appended.
 */
type Ctx = AgentContext<Record<string, never>, unknown, ScorekeepingState, ScorekeepingAsk>

/** A person's turn: a one-line answer to a request, or yes/no to a side question. */
export const ScorekeepingTurnInput = z.object({
  reply: z.string().max(2000).optional(),
  answer: z.enum(['yes', 'no']).optional(),
})

function turnMessage(
  ctx: HumanContext<unknown, unknown, ScorekeepingState, ScorekeepingAsk>,
  input: z.output<typeof ScorekeepingTurnInput>,
) {
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

export const scorekeepingPlugin: ProtocolPlugin<typeof scorekeeping> = {
  protocol: scorekeeping,
  sessionConfig: (raw) => ({ config: scorekeeping.config.parse(raw ?? {}), extras: {} }),
  agents: {
    program: {
      async 'game-master'(raw) {
        const ctx = raw as Ctx
        return { message: gameMaster(ctx.state, ctx.ask), context: { program: 'game-master' } }
      },
    },
    async llm(raw) {
      const ctx = raw as Ctx
      if (ctx.fill.kind !== 'llm') throw new Error('unreachable')
      const messages = answererPrompt(ctx.state, ctx.ask) as ChatMessage[]
      const r = await ctx.llm.chat(
        ctx.fill.model,
        { messages },
        { purpose: `scorekeeping-${ctx.ask.kind}`, stream: ctx.watched },
      )
      return { message: answererMessage(ctx.ask, r.text), context: messages, callId: r.callId }
    },
  },
  human: { input: ScorekeepingTurnInput, toMessage: turnMessage as never },
  project: (m: ScorekeepingMessage) => ({
    receiver: m.sender === 'questioner' ? 'answerer' : 'questioner',
    tag: m.kind,
    prediction: m.text.slice(0, 500),
  }),
  // A session runs on the game instance itself (the instance's input is clembench's instance object).
  setup: {
    options: ScorekeepingRunOptions,
    plan: planScorekeeping,
    legacy: { input: ScorekeepingSetupInput, toRun: scorekeepingLegacyToRun },
    fromForm: scorekeepingSetupFromForm,
    snapshot: (row) => row.input,
  },
  exports: scorekeepingExports,
  files: scorekeepingFiles,
  views: {
    session: scorekeepingSessionView,
    run: scorekeepingRunView,
    dashboard: (runId) => scorekeepingDashboard(runId),
  },
  seedDemo: seedScorekeepingDemo,
  demo: scorekeepingDemo,
  datasets: scorekeepingDatasets,
  operations: [importClembench],
  rest: [
    {
      method: 'POST',
      path: '/scorekeeping/datasets',
      summary:
        'Import clembench privateshared instances (multipart/form-data: `studyId`, `name`, `file`: the game folder as a zip or an instances file; `resources`: a zip, with an instances file; or `mode=generate` with `experiment`, `count`, `seed`): the dataset import of kind `clembench` (the same as POST /datasets with `kind=clembench`). Runs as a job: poll /datasets/{datasetId}/import',
      op: importClembench,
      source: 'multipart',
      status: 201,
      output: z.object({ id: z.string(), name: z.string(), status: z.literal('importing') }),
      errors: { 404: 'No such study, or not visible to you' },
      idempotent: true,
      docBody: () =>
        z.object({
          studyId: z.string(),
          name: z.string(),
          mode: z.enum(['import', 'generate']).optional(),
          file: z.string().meta({ format: 'binary', description: 'The game folder as a zip, or an instances file.' }),
          resources: z.string().meta({ format: 'binary' }).optional(),
          instancesFile: z.string().optional(),
          experiment: z.string().optional(),
          count: z.number().int().optional(),
          seed: z.number().int().optional(),
        }),
    },
  ],
  title: (instance) => {
    const i = instance as { experiment?: string; gameId?: number } | null
    return `${i?.experiment ?? 'game'} #${i?.gameId ?? '?'}`
  },
}
