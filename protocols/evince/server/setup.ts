import { z } from 'zod'
import { EVINCE_SEATS, type EvinceConfig, evinceConfig } from '@/protocols/evince/core'
import {
  badRequest,
  boolParam,
  db,
  seatsFromForm,
  type Actor,
  type RunPlan,
  type RunSetup,
  type RunSetupBody,
  type SetupTools,
} from '@/lib/server/sdk'

/**
 * An EVINCE debate run: one debate per case of a case set (a dataset of kind "cases"), or one case
 * typed in (kept in the study's "Typed-in cases" dataset, of its own kind `typed-cases`, so it is
 * never offered as a case set, nor becomes the form's default one). Debaters are LLMs (a model and its
 * temperature) or people of the study; the moderator is a judge LLM, or no judge (the program
 * "no-judge": equal weights, no CRIT, no report).
 */
const id = z.string().trim().min(1).max(100)

const debaterInput = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('llm'),
    connectionId: id,
    model: z.string().trim().max(200).optional(),
    temperature: z.coerce.number().min(0).max(2).optional(),
  }),
  z.object({ kind: z.literal('human'), userId: id }),
])

export const EvinceSetupInput = z
  .object({
    studyId: id,
    name: z.string({ error: 'Name the debate.' }).trim().min(1, 'Name the debate.').max(120),
    A: debaterInput,
    B: debaterInput,
    /** The moderator's judge (CRIT and the report); absent = no CRIT, no report. */
    judge: z.object({ connectionId: id, model: z.string().trim().max(200).optional() }).optional(),
    config: evinceConfig.omit({ labels: true, aliases: true }).partial().default({}),
    aliases: z.record(z.string().max(200), z.string().max(200)).default({}),
    /** Constrain the label space to the case set's ground-truth labels. */
    constrained: z.boolean().default(false),
    /** A case set … */
    datasetId: id.optional(),
    sample: z.coerce.number().int().min(1).max(10_000).optional(),
    /** … or one case typed in. */
    case: z
      .object({
        symptoms: z.string().trim().min(3, 'Describe the case (the symptoms).').max(10_000),
        truth: z.string().trim().max(200).default(''),
      })
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (!v.datasetId === !v.case)
      ctx.addIssue({ code: 'custom', path: ['datasetId'], message: 'Choose a case set or type one case.' })
    if (v.A.kind === 'human' && v.B.kind === 'human')
      ctx.addIssue({ code: 'custom', path: ['B'], message: 'At least one debater must be an LLM.' })
  })
export type EvinceSetupInput = z.output<typeof EvinceSetupInput>

const SINGLE_CASES = 'Typed-in cases'
/** The kind of the dataset that keeps typed-in cases: not a case set (the form lists only `cases`). */
export const TYPED_CASES_KIND = 'typed-cases'

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)
const num = (v: unknown) => (typeof v === 'number' ? v : text(v) === undefined ? undefined : Number(text(v)))

/** "alias = canonical" lines → an alias map. */
function aliases(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of (raw ?? '').split(/\r?\n/)) {
    const m = line.match(/^(.+?)\s*(?:=|→|->)\s*(.+)$/)
    if (m?.[1] && m[2]) out[m[1].trim()] = m[2].trim()
  }
  return out
}

/**
 * The set-up form's fields → the one create-run body: the debaters from the generic seat picker, the
 * moderator from the judge select (a judge LLM, or none: the program "no-judge").
 */
export function evinceSetupFromForm(f: Record<string, unknown>): RunSetupBody {
  let judge: Record<string, unknown> | undefined
  try {
    const j = text(f.judge)
    judge = j ? (JSON.parse(j) as Record<string, unknown>) : undefined
  } catch {}
  const judgeModel = text(f.judgeModelName)
  const single = text(f.source) === 'single'
  return {
    name: text(f.name),
    seats: {
      ...(seatsFromForm(
        EVINCE_SEATS.filter((d) => d.name !== 'moderator'),
        f,
      ) as RunSetupBody['seats']),
      moderator: judge
        ? {
            kind: 'llm',
            model: {
              connectionId: judge.connectionId as string,
              ...(judgeModel ? { model: judgeModel } : typeof judge.model === 'string' ? { model: judge.model } : {}),
            },
          }
        : { kind: 'program', program: 'no-judge' },
    },
    config: {
      k: num(f.k),
      maxRounds: num(f.maxRounds),
      tau: num(f.tau),
      epsilon: num(f.epsilon),
      delta: { initial: num(f.deltaInitial) ?? 0.9, decay: num(f.deltaDecay) ?? 0.75, hold: num(f.deltaHold) ?? 2 },
      aliases: aliases(text(f.aliases)),
    },
    options: {
      constrained: f.constrained === 'on' || f.constrained === true,
      ...(single ? { case: { symptoms: text(f.symptoms) ?? '', truth: text(f.truth) ?? '' } } : {}),
    },
    ...(single ? {} : { datasetId: text(f.datasetId), sample: text(f.sample) }),
  }
}

/** EVINCE's own run options: constrain the labels to the case set's, or one case typed in instead of a case set. */
export const EvinceRunOptions = z.strictObject({
  /** Constrain the label space to the case set's ground-truth labels. */
  constrained: boolParam.default(false),
  /** One case typed in (kept in the study's "Typed-in cases" dataset) instead of `datasetId`. */
  case: z
    .strictObject({
      symptoms: z.string().trim().min(3, 'Describe the case (the symptoms).').max(10_000),
      truth: z.string().trim().max(200).default(''),
    })
    .optional(),
})
export type EvinceRunOptions = z.output<typeof EvinceRunOptions>

/** The set-up body from before one seat vocabulary → the one shape (the judge fills the moderator seat). */
export function evinceLegacyToRun(input: EvinceSetupInput): RunSetupBody {
  const seat = (s: EvinceSetupInput['A']) =>
    s.kind === 'llm'
      ? {
          kind: 'llm' as const,
          model: {
            connectionId: s.connectionId,
            ...(s.model ? { model: s.model } : {}),
            ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
          },
        }
      : { kind: 'human' as const, userId: s.userId }
  return {
    name: input.name,
    ...(input.datasetId ? { datasetId: input.datasetId } : {}),
    seats: {
      A: seat(input.A),
      B: seat(input.B),
      moderator: input.judge
        ? {
            kind: 'llm',
            model: {
              connectionId: input.judge.connectionId,
              ...(input.judge.model ? { model: input.judge.model } : {}),
            },
          }
        : { kind: 'program', program: 'no-judge' },
    },
    config: { ...input.config, aliases: input.aliases },
    options: { constrained: input.constrained, ...(input.case ? { case: input.case } : {}) },
    ...(input.sample ? { sample: input.sample } : {}),
  }
}

export async function planEvince(
  actor: Actor,
  studyId: string,
  input: RunSetup<EvinceConfig, EvinceRunOptions>,
  tools: SetupTools,
): Promise<RunPlan> {
  const { seats, options } = input
  if (!input.datasetId === !options.case)
    throw badRequest('Choose a case set or type one case.', { datasetId: ['Choose a case set or type one case.'] })
  if (seats.A?.kind === 'human' && seats.B?.kind === 'human')
    throw badRequest('At least one debater must be an LLM.', { 'seats.B': ['At least one debater must be an LLM.'] })
  const judged = seats.moderator?.kind === 'llm'
  let datasetId: string
  let instanceIds: string[] | undefined
  if (options.case) {
    let ds = await db.dataset.findFirst({ where: { studyId, kind: TYPED_CASES_KIND } })
    ds ??= await db.dataset.create({
      data: {
        studyId,
        name: SINGLE_CASES,
        kind: TYPED_CASES_KIND,
        source: 'typed in',
        createdById: actor.userId || null,
      },
    })
    const last = await db.instance.findFirst({ where: { datasetId: ds.id }, orderBy: { index: 'desc' } })
    const inst = await db.instance.create({
      data: {
        datasetId: ds.id,
        index: (last?.index ?? -1) + 1,
        input: { symptoms: options.case.symptoms },
        prediction: options.case.truth,
        explanation: '',
      },
    })
    datasetId = ds.id
    instanceIds = [inst.id]
  } else {
    if (!input.datasetId) throw badRequest('Choose a case set or type a case.', { datasetId: ['Choose a case set.'] })
    const ds = await tools.dataset(input.datasetId)
    if (ds.kind !== 'cases')
      throw badRequest(`Debates run on case sets; "${ds.name}" is a ${ds.kind} dataset.`, {
        datasetId: ['Choose a case set.'],
      })
    datasetId = ds.id
    if (!(await db.instance.count({ where: { datasetId } }))) throw badRequest('The case set is empty.')
  }
  let labels: string[] = []
  if (options.constrained) {
    const all = await db.instance.findMany({
      where: { datasetId },
      select: { prediction: true },
      distinct: ['prediction'],
    })
    labels = all
      .map((x) => x.prediction)
      .filter(Boolean)
      .sort()
    if (!labels.length) throw badRequest('The case set has no ground-truth labels to constrain the debate to.')
  }
  // Without a judge there is no CRIT and no report; constrained labels are the case set's.
  const config = evinceConfig.parse({
    ...input.config,
    ...(judged ? {} : { crit: false, report: false }),
    ...(options.constrained ? { labels } : {}),
  })
  return {
    name: input.name,
    task: 'diagnosis',
    datasetId,
    config,
    seats,
    repetitions: input.repetitions,
    ...(instanceIds
      ? { instanceIds }
      : input.instanceIds
        ? { instanceIds: input.instanceIds }
        : input.sample
          ? { sample: input.sample }
          : {}),
    shuffle: input.shuffle,
    seatCycle: input.seatCycle,
    audit: { config },
  }
}
