import { z } from 'zod'
import { SCOREKEEPING_SEATS } from '@/protocols/scorekeeping/core'
import {
  badRequest,
  db,
  seatsFromForm,
  type Actor,
  type RunPlan,
  type RunSetup,
  type RunSetupBody,
  type SetupTools,
} from '@/lib/server/sdk'

/**
 * A scorekeeping run: one episode per game instance of a clembench dataset (optionally only some of
 * its experiments), `repetitions` episodes each. The questioner is clembench's programmatic game
 * master; the answerer is an LLM (a model and its temperature), a named person, or any member of the
 * study who claims the seat, so people play the same games as models and are scored the same way.
 */
const id = z.string().trim().min(1).max(100)

export const ScorekeepingSetupInput = z.object({
  studyId: id,
  name: z.string({ error: 'Name the run.' }).trim().min(1, 'Name the run.').max(120),
  datasetId: id,
  /** Only these experiments of the dataset (all when empty). */
  experiments: z.array(z.string().trim().min(1).max(100)).max(50).default([]),
  answerer: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('llm'),
      connectionId: id,
      model: z.string().trim().max(200).optional(),
      temperature: z.coerce.number().min(0).max(2).optional(),
    }),
    z.object({ kind: z.literal('human'), userId: id }),
    /** Any member of the study may take each episode's answerer seat. */
    z.object({ kind: z.literal('claimable') }),
  ]),
  repetitions: z.coerce.number().int().min(1).max(20).default(1),
})
export type ScorekeepingSetupInput = z.output<typeof ScorekeepingSetupInput>

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)

/** The set-up form's fields → the one create-run body (the answerer from the generic seat picker). */
export function scorekeepingSetupFromForm(f: Record<string, unknown>): RunSetupBody {
  const list = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v])
  return {
    name: text(f.name),
    datasetId: text(f.datasetId),
    seats: seatsFromForm(SCOREKEEPING_SEATS, f) as RunSetupBody['seats'],
    options: { experiments: list(f.experiments) },
    repetitions: text(f.repetitions),
  }
}

/** Scorekeeping's own run option: only some experiments of the clembench dataset. */
export const ScorekeepingRunOptions = z.strictObject({
  /** Only these experiments of the dataset (all when empty). */
  experiments: z.array(z.string().trim().min(1).max(100)).max(50).default([]),
})
export type ScorekeepingRunOptions = z.output<typeof ScorekeepingRunOptions>

/** The set-up body from before one seat vocabulary → the one shape (the game master needs no naming). */
export function scorekeepingLegacyToRun(input: ScorekeepingSetupInput): RunSetupBody {
  const a = input.answerer
  return {
    name: input.name,
    datasetId: input.datasetId,
    seats: {
      answerer:
        a.kind === 'llm'
          ? {
              kind: 'llm',
              model: {
                connectionId: a.connectionId,
                ...(a.model ? { model: a.model } : {}),
                ...(a.temperature !== undefined ? { temperature: a.temperature } : {}),
              },
            }
          : a.kind === 'human'
            ? { kind: 'human', userId: a.userId }
            : { kind: 'human', claimable: true },
    },
    options: { experiments: input.experiments },
    repetitions: input.repetitions,
  }
}

export async function planScorekeeping(
  _actor: Actor,
  _studyId: string,
  input: RunSetup<unknown, ScorekeepingRunOptions>,
  tools: SetupTools,
): Promise<RunPlan> {
  if (!input.datasetId) throw badRequest('Choose a clembench dataset.', { datasetId: ['Choose a clembench dataset.'] })
  if (input.repetitions > 20)
    throw badRequest('At most 20 episodes per game instance.', {
      repetitions: ['At most 20 episodes per game instance.'],
    })
  const ds = await tools.dataset(input.datasetId)
  if (ds.kind !== 'clembench')
    throw badRequest(`The scorekeeping game runs on clembench instances; "${ds.name}" is a ${ds.kind} dataset.`, {
      datasetId: ['Choose a clembench dataset.'],
    })
  const { experiments } = input.options
  const all = await db.instance.findMany({
    where: { datasetId: ds.id },
    orderBy: { index: 'asc' },
    select: { id: true, meta: true },
  })
  const given = input.instanceIds ? new Set(input.instanceIds) : null
  const chosen = all.filter(
    (i) =>
      (!given || given.has(i.id)) &&
      (!experiments.length || experiments.includes((i.meta as { experiment?: string }).experiment ?? '')),
  )
  if (!chosen.length)
    throw badRequest('No instance of the dataset belongs to the chosen experiments.', {
      experiments: ['Choose experiments of the dataset.'],
    })
  const picked = input.sample ? chosen.slice(0, input.sample) : chosen
  return {
    name: input.name,
    task: 'clembench',
    datasetId: ds.id,
    config: {},
    seats: input.seats,
    repetitions: input.repetitions,
    instanceIds: picked.map((i) => i.id),
    shuffle: input.shuffle,
    seatCycle: input.seatCycle,
    audit: { datasetId: ds.id, episodes: picked.length * input.repetitions, experiments },
  }
}
