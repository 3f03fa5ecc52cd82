import { z } from 'zod'
import {
  badRequest,
  seatsFromForm,
  type Actor,
  type RunPlan,
  type RunSetup,
  type RunSetupBody,
  type SetupTools,
} from '@/lib/server/sdk'
import {
  LABEL_PRESETS,
  LABELLING_SEATS,
  type LabellingConfig,
  LabellingConfig as ConfigSchema,
  LabelSchema,
} from '@/protocols/labelling/core'

/**
 * A labelling run is a labelling project: a `labelling-items` dataset, the label schema (the run's
 * config, its version recorded in every label) and N annotators per item, one session per (item,
 * slot): the run's repetitions are the slots. The annotator seat is claimable by any member of the
 * study who takes part (with the run options `distinctClaimants`, so one person never holds two slots
 * of an item, and `fillFirst` N, so the queue completes items to N first: the form sets both), a named
 * person, or an LLM (the whole project labelled by the model).
 *
 * The config is `{schema}`; a client may name a built-in preset instead (`{preset: 'relevance-0-2'}`).
 */
export const LabellingSetupConfig = z.preprocess((raw, ctx) => {
  const v = (raw ?? {}) as Record<string, unknown>
  const { preset, ...rest } = v
  if (preset === undefined || rest.schema !== undefined) return rest
  if (typeof preset === 'string' && Object.hasOwn(LABEL_PRESETS, preset))
    return { ...rest, schema: LABEL_PRESETS[preset as keyof typeof LABEL_PRESETS] }
  ctx.addIssue({
    code: 'custom',
    path: ['preset'],
    message: `Unknown preset ${JSON.stringify(preset)} (there are ${Object.keys(LABEL_PRESETS).join(', ')}).`,
  })
  return rest
}, ConfigSchema)

export const MAX_SLOTS = 20

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)

/**
 * The set-up form's fields → the one create-run body: the preset or a schema as JSON (`schemaJson`,
 * which wins when given), the slots as repetitions. The run options (`distinctClaimants`, `fillFirst`)
 * are the generic action's own fields, which the form posts (on, and the slots).
 */
export function labellingSetupFromForm(f: Record<string, unknown>): RunSetupBody {
  const json = text(f.schemaJson)
  let config: Record<string, unknown> = { preset: text(f.preset) ?? 'relevance-0-2' }
  if (json) {
    try {
      config = { schema: JSON.parse(json) }
    } catch {
      throw badRequest('The label schema is not valid JSON.', { 'config.schema': ['Not valid JSON.'] })
    }
  }
  const variant = text(f.variant)
  if (variant) config = { ...config, labeller: { variant } }
  const slots = text(f.slots) ?? '1'
  return {
    name: text(f.name),
    datasetId: text(f.datasetId),
    seats: seatsFromForm(LABELLING_SEATS, f) as RunSetupBody['seats'],
    config,
    repetitions: slots,
    sample: text(f.sample),
    shuffle: f.shuffle === true || f.shuffle === 'on',
  }
}

export async function planLabelling(
  _actor: Actor,
  _studyId: string,
  input: RunSetup<LabellingConfig, Record<string, never>>,
  tools: SetupTools,
): Promise<RunPlan> {
  if (!input.datasetId) throw badRequest('Choose a dataset of items.', { datasetId: ['Choose a dataset of items.'] })
  if (input.repetitions > MAX_SLOTS)
    throw badRequest(`At most ${MAX_SLOTS} annotators per item.`, { repetitions: [`At most ${MAX_SLOTS} slots.`] })
  const ds = await tools.dataset(input.datasetId)
  // `trec` (server/trec-import.ts) holds query–document items with the qrels as gold, as labelling-items may.
  if (ds.kind !== 'labelling-items' && ds.kind !== 'trec')
    throw badRequest(`A labelling run labels a dataset of items; "${ds.name}" is a ${ds.kind} dataset.`, {
      datasetId: ['Choose a labelling-items or trec dataset.'],
    })
  const schema = LabelSchema.parse(input.config.schema)
  return {
    name: input.name,
    task: 'labelling',
    datasetId: ds.id,
    config: { schema, labeller: input.config.labeller },
    seats: input.seats,
    repetitions: input.repetitions,
    ...(input.instanceIds ? { instanceIds: input.instanceIds } : {}),
    ...(input.sample ? { sample: input.sample } : {}),
    shuffle: input.shuffle,
    seatCycle: input.seatCycle,
    audit: { datasetId: ds.id, slots: input.repetitions, schemaVersion: schema.version },
  }
}
