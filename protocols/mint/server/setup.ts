import { z } from 'zod'
import {
  type Actor,
  badRequest,
  db,
  type InstanceRow,
  type RunPlan,
  type RunSetup,
  type RunSetupBody,
  type SetupTools,
  seatsFromForm,
} from '@/lib/server/sdk'
import { DATASETS, MINT_SEATS, type MintConfig, mintConfig, TASK_TYPE_OF } from '@/protocols/mint/core/protocol'
import { INSTALL_HINT, sandboxStatus } from '@/protocols/mint/server/sandbox'

/**
 * A MINT run: one episode per task of a MINT task set (`mint-tasks`), with the budget k (default 5), the
 * proposals p (default 2; 1 when k = 1) and the feedback settings. Seats: the evaluated model (an LLM,
 * called with the paper's settings, or a person answering as the model), the Python tool and the success
 * check (programs, filled by the engine), the feedback (an LLM simulating the expert, a person, or the
 * program `no-feedback` for a run without feedback). The feedback seat and the mode agree: `no-feedback`
 * ⇔ mode none. The Python tool must be available (bubblewrap and python3 with numpy and sympy): otherwise
 * the set-up says so and why, rather than creating episodes that would stall at their first cell.
 */
export const DATASET_KIND = 'mint-tasks'

export { mintConfig as MintSetupConfig }

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)

/**
 * The set-up form's fields → the create-run body: the generic seat picker's fields, `k`, `p`,
 * `feedback.mode` (textual | binary; none when the feedback seat is "no feedback"), `feedback.groundTruth`
 * ("on"), `feedback.frequency` (dense | sparse), `sample`.
 */
export function mintSetupFromForm(f: Record<string, unknown>): RunSetupBody {
  const seats = seatsFromForm(MINT_SEATS, f) as RunSetupBody['seats']
  const feedbackSeat = seats.feedback as { kind?: string } | undefined
  const none = !feedbackSeat || feedbackSeat.kind === 'program'
  const k = text(f.k)
  const p = text(f.p)
  // The curve's budgets: ticked boxes `ks` (one value, or several).
  const ks = (Array.isArray(f.ks) ? f.ks : [f.ks]).map(text).filter((x): x is string => x !== undefined)
  return {
    name: text(f.name),
    ...(ks.length ? { options: { ks } } : {}),
    datasetId: text(f.datasetId),
    seats: none ? { ...seats, feedback: { kind: 'program', program: 'no-feedback' } } : seats,
    config: {
      ...(k ? { k: Number(k) } : {}),
      ...(p ? { p: Number(p) } : {}),
      feedback: none
        ? { mode: 'none' }
        : {
            mode: text(f['feedback.mode']) ?? 'textual',
            groundTruth: f['feedback.groundTruth'] === 'on' || f['feedback.groundTruth'] === 'true',
            frequency: text(f['feedback.frequency']) ?? 'dense',
          },
    },
    repetitions: text(f.repetitions),
    sample: text(f.sample),
  }
}

/**
 * MINT's own run options: `ks`, the budgets of an SR-vs-k curve. With them, one set-up creates one run
 * per k, together (all or none): each its own run with budget k (SR_k comes from the separate run,
 * never from a prefix of a longer one), p = min(p, k) (so 2, or 1 when k = 1, by default), named
 * "<name> · k = <k>"; the leaderboard draws runs of one model and feedback setting as one curve.
 */
export const MintSetupOptions = z.strictObject({
  ks: z
    .array(z.coerce.number().int().min(1).max(10))
    .min(1)
    .max(10)
    .refine((ks) => new Set(ks).size === ks.length, 'Choose each k once.')
    .optional(),
})
export type MintSetupOptions = z.output<typeof MintSetupOptions>

/** The name of the run with budget k of a curve named `name`. */
export const curveRunName = (name: string, k: number) => `${name} · k = ${k}`

/** A session's snapshot: the task, and its reference from the row's prediction. */
export function mintSnapshot(row: InstanceRow): unknown {
  return { ...(row.input as Record<string, unknown>), reference: row.prediction }
}

/**
 * What the set-up form shows beside the study's datasets: whether the Python tool can run here, and why
 * not; per MINT task set its task type and how many corpus pages its wikipedia_search has (0: none).
 */
export async function mintFormData(_actor: Actor, studyId: string): Promise<Record<string, unknown>> {
  const status = await sandboxStatus()
  const sets = await db.dataset.findMany({ where: { studyId, kind: DATASET_KIND }, select: { id: true } })
  const taskSets: Record<string, { taskType: string; corpusPages: number }> = {}
  for (const { id } of sets) {
    const first = await db.instance.findFirst({
      where: { datasetId: id },
      orderBy: { index: 'asc' },
      select: { meta: true },
    })
    const meta = StoredMeta.safeParse(first?.meta)
    if (meta.success) taskSets[id] = { taskType: TASK_TYPE_OF[meta.data.dataset], corpusPages: meta.data.corpusPages }
  }
  return {
    sandbox: status.available
      ? { available: true }
      : { available: false, reason: status.reason, installHint: INSTALL_HINT },
    taskSets,
  }
}

/** What a `mint-tasks` import stores in each task's meta (server/datasets.ts). */
const StoredMeta = z.object({ dataset: z.enum(DATASETS), corpusPages: z.number().int().min(0).default(0) })
const TaskSetMeta = z.object({ taskType: z.string(), corpusPages: z.number().int().min(0) })

export const MintFormData = z.object({
  sandbox: z
    .object({ available: z.boolean(), reason: z.string().optional(), installHint: z.string().optional() })
    .default({ available: true }),
  taskSets: z.record(z.string(), TaskSetMeta).default({}),
})

export async function planMint(
  _actor: Actor,
  _studyId: string,
  input: RunSetup<MintConfig, MintSetupOptions>,
  tools: SetupTools,
): Promise<RunPlan | RunPlan[]> {
  if (!input.datasetId) throw badRequest('Choose a MINT task set.', { datasetId: ['Choose a MINT task set.'] })
  const ds = await tools.dataset(input.datasetId)
  if (ds.kind !== DATASET_KIND)
    throw badRequest(`MINT runs on a MINT task set; "${ds.name}" is a ${ds.kind} dataset.`, {
      datasetId: ['Choose a MINT task set.'],
    })
  const config = input.config
  const ks = input.options?.ks ? [...input.options.ks].sort((a, b) => a - b) : undefined
  if (!ks && config.p > config.k)
    throw badRequest(`At most k = ${config.k} proposals fit in the budget; p is ${config.p}.`, {
      'config.p': [`p must be at most k (${config.k}).`],
    })
  const feedback = input.seats.feedback
  const noFeedbackSeat = feedback?.kind === 'program'
  if (noFeedbackSeat && config.feedback.mode !== 'none')
    throw badRequest('Feedback needs a feedback seat: an LLM or a person, not “no feedback”.', {
      'seats.feedback': ['Choose an LLM or a person to give the feedback.'],
    })
  if (!noFeedbackSeat && config.feedback.mode === 'none')
    throw badRequest('A run without feedback fills the feedback seat with the program no-feedback.', {
      'config.feedback.mode': ['Choose textual or binary feedback, or no feedback seat.'],
    })
  const status = await sandboxStatus()
  if (!status.available)
    throw badRequest(`MINT's Python tool is unavailable: ${status.reason}. Install it with: ${INSTALL_HINT}`, {
      datasetId: [`The Python tool is unavailable: ${status.reason}`],
    })
  const count = await db.instance.count({ where: { datasetId: ds.id } })
  if (!count) throw badRequest('The task set has no tasks.', { datasetId: ['The task set has no tasks.'] })
  const one = (name: string, c: MintConfig): RunPlan => ({
    name,
    task: 'mint',
    datasetId: ds.id,
    config: c,
    seats: input.seats,
    repetitions: input.repetitions,
    ...(input.instanceIds ? { instanceIds: input.instanceIds } : {}),
    ...(input.sample ? { sample: input.sample } : {}),
    shuffle: input.shuffle,
    seatCycle: input.seatCycle,
    audit: { datasetId: ds.id, k: c.k, p: c.p, feedback: c.feedback, ...(ks ? { curve: input.name, ks } : {}) },
  })
  if (!ks) return one(input.name, config)
  return ks.map((k) => one(curveRunName(input.name, k), { ...config, k, p: Math.min(config.p, k) }))
}
