import { z } from 'zod'
import { PXP_SEAT_DECLS, pxpConfig } from '@/protocols/pxp/core'
import { TaskTemplate } from '@/lib/tasks/generic'
import {
  badRequest,
  boolParam,
  db,
  notFound,
  seatsFromForm,
  type Actor,
  type InstanceRow,
  type RunPlan,
  type RunSetup,
  type RunSetupBody,
  type SetupTools,
} from '@/lib/server/sdk'

/**
 * A PXP experiment: R repetitions over a dataset (RAD, DRUG, or generic with a task template), one
 * session per instance and repetition in a recorded order (optionally a seeded shuffle), with
 * carry-over of the machine's context within a repetition (the paper): PXP's schedule runs a
 * repetition's sessions in order (schedule.ts), recorded as `carryOver` in the config. Seats:
 * the machine is an LLM (generator + AGREE checker) or experts; the tester is the ground-truth proxy,
 * experts (round robin over the sessions) or another LLM.
 */
const id = z.string().trim().min(1).max(100)
const llmRef = z.object({
  connectionId: id,
  model: z.string().trim().max(200).optional(),
  name: z.string().max(200).optional(),
})
const generatorRef = llmRef.extend({
  temperature: z.coerce.number().min(0).max(2).optional(),
  vision: z.boolean().default(true),
})

export const PxpSetupInput = z.object({
  studyId: id,
  name: z.string({ error: 'Name the experiment.' }).trim().min(1, 'Name the experiment.').max(120),
  datasetId: id,
  /** The task template of a generic dataset (its spec is copied into every session). */
  templateId: id.optional(),
  /** Use the first `sample` instances of the dataset (all when absent). */
  sample: z.coerce.number().int().min(1).max(100_000).optional(),
  repetitions: z.coerce.number().int().min(1).max(50).default(1),
  n: z.coerce.number().int().min(1).max(100).default(10),
  k: z.coerce.number().int().min(1).max(100).default(3),
  generator: generatorRef,
  checker: llmRef,
  carryOver: boolParam.default(true),
  /** Shuffle the instance order of each repetition (seeded by the repetition number). */
  shuffle: boolParam.default(false),
  /** Who fills the tester seat h: the ground truth (proxy), assigned experts (round robin) or another LLM. */
  tester: z.enum(['proxy', 'expert', 'llm']).default('proxy'),
  /** Who fills the machine seat m: the LLM generator, or assigned experts (the protocol is symmetric). */
  machine: z.enum(['llm', 'expert']).default('llm'),
  testerGenerator: generatorRef.optional(),
  /**
   * Experts in the machine seat against the proxy tester: the proxy answers with the ground truth, so
   * its first REFUTE shows them the reference answer. `tag-only` shows them only its tag (recorded in
   * the run's config; researchers still see everything).
   */
  proxyAnswer: z.enum(['shown', 'tag-only']).default('shown'),
  expertIds: z.array(id).max(100).default([]),
})
export type PxpSetupInput = z.output<typeof PxpSetupInput>

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)
const num = (v: unknown) => (typeof v === 'number' ? v : text(v) === undefined ? undefined : Number(text(v)))
const on = (v: unknown) => v === 'on' || v === true

/**
 * The set-up form's fields → the one run-create body. The seats are the generic seat pickers'
 * (`seats.m.*`, `seats.h.*`: several experts are a list the sessions take round robin) with the AGREE
 * checker asked once (`helpers.checker`) for every seat that uses it; the config and options fields
 * are named by their place in the body (`config.n`, `options.carryOver` …), so a refusal sits beside
 * its field. The task template keeps its field (`templateId`).
 */
export function pxpSetupFromForm(f: Record<string, unknown>): RunSetupBody {
  return {
    name: text(f.name) as string,
    datasetId: text(f.datasetId),
    seats: seatsFromForm(PXP_SEAT_DECLS, f) as RunSetupBody['seats'],
    config: {
      n: num(f['config.n']),
      k: num(f['config.k']),
      ...(text(f['config.proxyAnswer']) ? { proxyAnswer: text(f['config.proxyAnswer']) } : {}),
    },
    options: {
      ...(text(f.templateId) ? { templateId: text(f.templateId) } : {}),
      carryOver: on(f['options.carryOver']),
    },
    repetitions: f.repetitions as RunSetupBody['repetitions'],
    sample: f.sample as RunSetupBody['sample'],
    shuffle: on(f.shuffle),
  }
}

/** PXP's config as a client gives it: n and k, and how experts see the proxy's answer. */
export const PxpRunConfig = pxpConfig.extend({
  /** At most 100 messages and k below that, as the set-up always allowed (the protocol itself takes any). */
  n: z.number().int().min(1).max(100).default(10),
  k: z.number().int().min(1).max(100).default(3),
  /**
   * Experts in the machine seat against the proxy tester: the proxy answers with the ground truth, so
   * its first REFUTE shows them the reference answer. `tag-only` shows them only its tag (recorded in
   * the run's config; researchers still see everything). Default `shown`.
   */
  proxyAnswer: z.enum(['shown', 'tag-only']).optional(),
})
export type PxpRunConfig = z.output<typeof PxpRunConfig>

/** PXP's own run options: a generic dataset's task template, and carry-over within a repetition. */
export const PxpRunOptions = z.strictObject({
  /** The task template of a generic dataset (its spec is copied into every session). */
  templateId: id.optional(),
  /** The machine's context carries over from one session to the next within a repetition (the paper). */
  carryOver: boolParam.default(true),
})
export type PxpRunOptions = z.output<typeof PxpRunOptions>

/**
 * The set-up body from before one seat vocabulary → the one shape: the machine is the generator
 * with the AGREE checker or the experts (a list of fills: round robin over the sessions); the tester
 * the proxy, the experts, or another LLM, each with the checker.
 */
export function pxpLegacyToRun(input: PxpSetupInput): RunSetupBody {
  if (input.machine === 'expert' && input.tester === 'expert')
    throw badRequest('One seat must be filled by an LLM or the proxy: experts cannot sit on both sides.', {
      tester: ['Choose the proxy or an LLM tester when experts play the machine.'],
    })
  if ((input.tester === 'expert' || input.machine === 'expert') && !input.expertIds.length)
    throw badRequest('Assign at least one expert to fill the seat.', { expertIds: ['Choose at least one expert.'] })
  const checker = input.checker
  const experts = input.expertIds.map((userId) => ({ kind: 'human' as const, userId }))
  return {
    name: input.name,
    datasetId: input.datasetId,
    seats: {
      m: input.machine === 'expert' ? experts : { kind: 'llm', model: input.generator, helpers: { checker } },
      h:
        input.tester === 'expert'
          ? experts
          : input.tester === 'llm'
            ? { kind: 'llm', model: input.testerGenerator ?? input.generator, helpers: { checker } }
            : { kind: 'proxy', helpers: { checker } },
    },
    config: { n: input.n, k: input.k, proxyAnswer: input.proxyAnswer },
    options: { templateId: input.templateId, carryOver: input.carryOver },
    repetitions: input.repetitions,
    sample: input.sample,
    shuffle: input.shuffle,
  }
}

export async function planPxp(
  _actor: Actor,
  studyId: string,
  input: RunSetup<PxpRunConfig, PxpRunOptions>,
  tools: SetupTools,
): Promise<RunPlan> {
  if (!input.datasetId) throw badRequest('Choose a dataset.', { datasetId: ['Choose a dataset.'] })
  const dataset = await tools.dataset(input.datasetId)
  let template: TaskTemplate | undefined
  if (dataset.kind === 'generic') {
    if (!input.options.templateId)
      throw badRequest('A generic dataset needs a task template.', {
        templateId: ['Choose a task template.'],
        'options.templateId': ['Choose a task template.'],
      })
    const t = await db.taskTemplate.findFirst({ where: { id: input.options.templateId, studyId } })
    if (!t) throw notFound('Template')
    template = TaskTemplate.parse(t.spec)
  } else if (dataset.kind !== 'rad' && dataset.kind !== 'drug') {
    throw badRequest(`PXP experiments do not run on ${dataset.kind} datasets.`, {
      datasetId: ['Choose a RAD, DRUG or generic dataset.'],
    })
  }
  const { m, h } = input.seats
  if (m?.kind === 'human' && h?.kind === 'human')
    throw badRequest('One seat must be filled by an LLM or the proxy: experts cannot sit on both sides.', {
      'seats.h': ['Choose the proxy or an LLM tester when experts play the machine.'],
    })
  // The protocol reads n and k; a generic task's template travels with them (a snapshot, so a later
  // template never changes a running experiment).
  const { proxyAnswer, ...nk } = input.config
  const config = {
    ...nk,
    ...(template ? { template } : {}),
    ...(m?.kind === 'human' && h?.kind === 'proxy' ? { proxyAnswer: proxyAnswer ?? 'shown' } : {}),
    // Carry-over is PXP's schedule (schedule.ts): it travels in the config every session gets.
    carryOver: input.options.carryOver,
  }
  return {
    name: input.name,
    task: dataset.kind,
    datasetId: dataset.id,
    config,
    seats: input.seats,
    repetitions: input.repetitions,
    ...(input.instanceIds ? { instanceIds: input.instanceIds } : input.sample ? { sample: input.sample } : {}),
    shuffle: input.shuffle,
    seatCycle: input.seatCycle,
    audit: { datasetId: dataset.id, repetitions: input.repetitions, config },
  }
}

/** A session's snapshot of its instance: x, y, e and the dataset (its images are the dataset's assets). */
export function pxpSnapshot(row: InstanceRow) {
  return { input: row.input, prediction: row.prediction, explanation: row.explanation, datasetId: row.datasetId }
}
