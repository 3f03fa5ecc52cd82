import { z } from 'zod'
import { canonicalLabel } from '@/protocols/evince/core/metrics'
import { type EvinceMessage, evince, type TurnMessage } from '@/protocols/evince/core'
import { badRequest, definePlugin, type HumanContext } from '@/lib/server/sdk'
import { evinceAgents } from '@/protocols/evince/server/agents'
import { evinceDemo } from '@/protocols/evince/server/demo'

export type { EvinceCompareView, EvinceRunView, EvinceSessionView } from '@/protocols/evince/server/views'

/**
 * EVINCE debates on the engine (the protocol: protocols/evince/core; prompts: protocols/evince/core/prompts).
 * This entry holds what a worker needs to step a debate; set-up, pages, exports, the demo seed and the
 * operations are modules loaded on first use.
 */

// ---------------------------------------------------------------------------------------------
// A person's turn: the top-k editor
// ---------------------------------------------------------------------------------------------

export const EvinceTurnInput = z.object({
  predictions: z
    .array(
      z.object({
        label: z.string().trim().min(1, 'Name every diagnosis.').max(200),
        probability: z.coerce.number().finite().min(0, 'Probabilities cannot be negative.').max(1),
        justification: z.string().trim().max(4000).default(''),
      }),
    )
    .min(1, 'Give at least one diagnosis.'),
  arguments: z.array(z.string().trim().max(4000)).max(50).default([]),
  counterArguments: z.array(z.string().trim().max(4000)).max(50).default([]),
})
type EvinceTurnInput = z.output<typeof EvinceTurnInput>

function turnMessage(ctx: HumanContext<typeof evince>, input: EvinceTurnInput) {
  const { config, ask } = ctx
  if (ask.kind !== 'turn') throw badRequest('It is not a debater’s turn.')
  const sum = input.predictions.reduce((a, p) => a + p.probability, 0)
  if (Math.abs(sum - 1) > 0.005)
    throw badRequest(`The probabilities sum to ${(sum * 100).toFixed(1)}%; they must sum to 100%.`, {
      predictions: ['Make the probabilities sum to 100%.'],
    })
  if (input.predictions.length > config.k)
    throw badRequest(`List at most ${config.k} diagnoses.`, { predictions: [`At most ${config.k}.`] })
  const labels = input.predictions.map((p) => canonicalLabel(p.label, config.aliases))
  if (new Set(labels).size !== labels.length)
    throw badRequest('Each diagnosis may appear once.', { predictions: ['Merge the repeated diagnosis.'] })
  if (config.labels.length) {
    const allowed = new Set(config.labels.map((l) => canonicalLabel(l, config.aliases)))
    const bad = input.predictions.filter((p) => !allowed.has(canonicalLabel(p.label, config.aliases)))
    if (bad.length) throw badRequest(`Not in this debate's label space: ${bad.map((b) => b.label).join(', ')}.`)
  }
  const message: TurnMessage = {
    seq: ask.j,
    kind: 'turn',
    sender: ask.seat,
    round: ask.round,
    predictions: input.predictions,
    arguments: input.arguments.filter(Boolean),
    counterArguments: input.counterArguments.filter(Boolean),
  }
  return { message, meta: { audit: { round: ask.round, top: input.predictions[0]?.label } } }
}

/** The editor posts its turn as JSON in `turn`. */
function turnFromForm(f: Record<string, unknown>) {
  try {
    return typeof f.turn === 'string' ? JSON.parse(f.turn) : f
  } catch {
    throw badRequest('The turn could not be read; reload the page (your draft is kept).')
  }
}

export const evincePlugin = definePlugin(evince, {
  agents: evinceAgents,
  human: { input: EvinceTurnInput, toMessage: turnMessage, fromForm: turnFromForm },
  project: (m: EvinceMessage) => ({
    receiver: m.sender === 'A' ? 'B' : m.sender === 'B' ? 'A' : 'A,B',
    label: m.kind,
    value:
      m.kind === 'turn'
        ? (m.predictions[0]?.label ?? '')
        : m.kind === 'crit'
          ? m.score.toFixed(3)
          : m.conclusion.slice(0, 500),
  }),
  // value: a turn's top diagnosis, a critique's score, or the start of the conclusion.
  projectionNames: { label: 'kind', value: 'summary' },
  setup: () =>
    import('@/protocols/evince/server/setup').then((m) => ({
      options: m.EvinceRunOptions,
      plan: m.planEvince,
      legacy: { input: m.EvinceSetupInput, toRun: m.evinceLegacyToRun },
      fromForm: m.evinceSetupFromForm,
    })),
  views: () =>
    Promise.all([import('@/protocols/evince/server/views'), import('@/protocols/evince/server/transcript')]).then(
      ([m, t]) => ({ ...m.evinceViews, transcript: t.evinceTranscript }),
    ),
  exports: () => import('@/protocols/evince/server/exports').then((m) => ({ tables: m.evinceExports })),
  seed: () => import('@/protocols/evince/server/seed').then((m) => ({ seedDemo: m.seedEvinceDemo })),
  ops: async () => {
    const [{ mergeDebateLabels }, { evinceDatasets }] = await Promise.all([
      import('@/protocols/evince/server/operations'),
      import('@/protocols/evince/server/datasets'),
    ])
    return { operations: [mergeDebateLabels], datasets: evinceDatasets }
  },
  demo: evinceDemo,
  title: (instance) => {
    const s = instance.input.symptoms
    return s.length > 60 ? `${s.slice(0, 59)}…` : s
  },
})
