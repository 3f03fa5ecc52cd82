import { z } from 'zod'
import { REHAC_SEATS } from '@/protocols/rehac/core/protocol'
import { deciderParamsProblem } from '@/protocols/rehac/server/agents'
import {
  type Actor,
  badRequest,
  db,
  hasScope,
  type InstanceRow,
  type RunPlan,
  type RunSetup,
  type RunSetupBody,
  type SetupTools,
  refusalForRestrictedUrl,
  seatsFromForm,
} from '@/lib/server/sdk'

/**
 * A ReHAC run: one episode per task of a ReHAC dataset (a QA set with its corpus, or a SQL task set with
 * its schema), `repetitions` episodes each. Seats: the decider (a program with its params, the prompt
 * policy on an LLM, or a person), the agent (an LLM), the human (a person or a simulated one on an LLM),
 * the environment (the program). With `collection` the coverage scheduler grows each task's trajectory
 * tree (forks where a reached prefix lacks a branch); the decider should then be the `tree` program.
 * With an LLM decider (the paper's prompt policy) the run's config gets `examples`: two finished
 * trajectories of the study's own data, or the built-in pair when it has none (server/examples.ts).
 */
export const DATASET_KINDS = ['rehac-qa', 'rehac-sql'] as const

export const RehacRunOptions = z.strictObject({
  /** Grow the trajectory tree of each task (the coverage scheduler). */
  collection: z.boolean().default(false),
  /** Human samples per human branch in a collection (1 when the human is simulated). */
  humanSamples: z.coerce.number().int().min(1).max(5).default(1),
})
export type RehacRunOptions = z.output<typeof RehacRunOptions>

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)

/**
 * The set-up form's fields → the create-run body. Beside the generic seat picker's fields: `threshold`,
 * `collection` ("on"), `humanSamples`, and the decider program's params `decider.seed`, `decider.url`,
 * `decider.solvers` (a schedule: h/a per step), `decider.rule` (argmax | threshold:<p> | sample:<seed>), `decider.model` (a trained policy's JSON).
 */
export function rehacSetupFromForm(f: Record<string, unknown>): RunSetupBody {
  const seats = seatsFromForm(REHAC_SEATS, f) as Record<string, Record<string, unknown>>
  const decider = seats.decider
  if (decider && decider.kind === 'program') {
    const params: Record<string, unknown> = {}
    const seed = text(f['decider.seed'])
    if (seed !== undefined) params.seed = Number(seed)
    const solvers = text(f['decider.solvers'])
    if (solvers) params.solvers = solvers.trim().toLowerCase()
    const url = text(f['decider.url'])
    if (url) params.url = url
    const rule = text(f['decider.rule'])
    if (rule) {
      const [kind, value] = rule.split(':')
      params.rule =
        kind === 'threshold'
          ? { kind, value: Number(value) }
          : kind === 'sample'
            ? { kind, seed: Number(value ?? 0) }
            : { kind: 'argmax' }
    }
    const model = text(f['decider.model'])
    if (model) {
      try {
        params.model = JSON.parse(model)
      } catch {
        params.model = model
      }
    }
    decider.params = params
  }
  const threshold = text(f.threshold)
  return {
    name: text(f.name),
    datasetId: text(f.datasetId),
    seats: seats as RunSetupBody['seats'],
    config: threshold ? { threshold: Number(threshold) } : {},
    options: { collection: f.collection === 'on' || f.collection === 'true', humanSamples: text(f.humanSamples) },
    repetitions: text(f.repetitions),
    sample: text(f.sample),
  }
}

/** A session's snapshot: the task (gold answer from the row's prediction) and its environment data. */
export function rehacSnapshot(row: InstanceRow): unknown {
  return { ...(row.input as Record<string, unknown>), answer: row.prediction }
}

/**
 * The HTTP policy's URL is an address the person chose: unless they may point connections at internal
 * hosts, it must pass the check of restricted LLM connections (a public address, or one
 * PARLEY_ALLOWED_LLM_HOSTS names), and the decider then connects through the guarded transport
 * (`restrictedHosts`, set here whatever the params said), so a name that later resolves inward is
 * refused too.
 */
async function checkPolicyUrl(actor: Actor, seats: Record<string, unknown>): Promise<void> {
  const decider = seats.decider as { kind?: string; program?: string; params?: Record<string, unknown> } | undefined
  if (decider?.kind !== 'program' || decider.program !== 'http-policy') return
  const restricted = !hasScope(actor.role, 'connections:internal-hosts')
  const params: Record<string, unknown> = { ...(decider.params ?? {}), restrictedHosts: restricted }
  decider.params = params
  if (!restricted || typeof params.url !== 'string') return
  let why: string | undefined
  try {
    why = await refusalForRestrictedUrl(params.url)
  } catch {
    why = 'The policy service URL is not a valid address.'
  }
  if (why) throw badRequest(`Policy service URL: ${why}`, { 'seats.decider': [why] })
}

export async function planRehac(
  actor: Actor,
  studyId: string,
  input: RunSetup<{ threshold?: number }, RehacRunOptions>,
  tools: SetupTools,
): Promise<RunPlan> {
  if (!input.datasetId) throw badRequest('Choose a ReHAC task set.', { datasetId: ['Choose a ReHAC task set.'] })
  const ds = await tools.dataset(input.datasetId)
  if (!(DATASET_KINDS as readonly string[]).includes(ds.kind))
    throw badRequest(`ReHAC runs on a ReHAC QA or SQL task set; "${ds.name}" is a ${ds.kind} dataset.`, {
      datasetId: ['Choose a ReHAC task set.'],
    })
  const decider = input.seats.decider
  if (input.options.collection && !(decider?.kind === 'program' && decider.program === 'tree'))
    throw badRequest('A collection grows trees by forking: its decider is the tree program.', {
      'seats.decider': ['Choose the tree program for a collection.'],
    })
  const paramsProblem = decider?.kind === 'program' ? deciderParamsProblem(decider.program, decider.params) : null
  if (paramsProblem)
    throw badRequest(`The decider's parameters do not fit: ${paramsProblem}.`, { 'seats.decider': [paramsProblem] })
  await checkPolicyUrl(actor, input.seats as Record<string, unknown>)
  const count = await db.instance.count({ where: { datasetId: ds.id } })
  if (!count) throw badRequest('The task set has no tasks.', { datasetId: ['The task set has no tasks.'] })
  const task = ds.kind === 'rehac-sql' ? 'sql' : 'qa'
  // The prompt policy (an LLM decider): its two few-shot examples from the study's data, fixed now.
  const examples =
    decider?.kind === 'llm'
      ? await import('@/protocols/rehac/server/examples').then(async (m) =>
          m.pickStudyExamples(studyId, task, await m.questionsOfRun(ds.id, input.instanceIds, input.sample)),
        )
      : undefined
  return {
    name: input.name,
    task,
    datasetId: ds.id,
    config: {
      ...input.config,
      ...(examples ? { examples } : {}),
      ...(input.options.collection ? { collection: { tree: true, humanSamples: input.options.humanSamples } } : {}),
    },
    seats: input.seats,
    repetitions: input.repetitions,
    ...(input.instanceIds ? { instanceIds: input.instanceIds } : {}),
    ...(input.sample ? { sample: input.sample } : {}),
    shuffle: input.shuffle,
    seatCycle: input.seatCycle,
    audit: { datasetId: ds.id, collection: input.options.collection },
  }
}
