import { z } from 'zod'
import {
  type Actor,
  actorRef,
  badRequest,
  createRun,
  db,
  defineOperation,
  enqueuePluginJob,
  execute,
  id,
  isDatabaseUnavailable,
  notFound,
  type PluginJob,
  type Prisma,
  requireStudyAccess,
  retryStalled,
  writeAudit,
} from '@/lib/server/sdk'
import { type LabTable, promptLabTable } from '@/protocols/labelling/core/prompt-lab'
import { paraphraseName, paraphraseSchema, variantCode } from '@/protocols/labelling/core/variants'
import {
  goldItems,
  labelsAndCosts,
  PromptLabArgs,
  type PromptLabRun,
  tableOptions,
  trecRunsOf,
} from '@/protocols/labelling/server/lab-data'

/**
 * Prompt-lab runs on the job queue (issue 25). Starting one stores what was asked and enqueues the
 * plugin's `lab-run` job; the request returns at once with the lab run's id. The job creates one
 * LLM-labeller run per prompt through `runs.create` on behalf of whoever started it (their access
 * checked again), whose sessions the step workers label (each LLM call retried by the LLM seam), then
 * looks again every LAB_POLL_SECONDS until every run is done and stores the tables. A run whose
 * labels failed (stalled sessions) or was cancelled leaves the lab run `failed` with the reason;
 * `labelling.lab-runs.retry` puts its stalled sessions back and the lab run on the queue.
 */

export const LAB_POLL_SECONDS = 2
export const LAB_RUN_JOB = 'lab-run'

const Prompt = z.object({ variant: variantCode, paraphrase: paraphraseSchema.optional() })

/** What a lab run was asked for (stored on the row, read back by the job). */
export const LabRunSpec = z.object({
  connectionId: z.string().min(1, 'Choose an LLM connection.').max(40),
  model: z.string().trim().max(200).optional(),
  prompts: z.array(Prompt).min(1, 'Pick at least one variant.').max(64, 'At most 64 prompts at once.'),
  args: PromptLabArgs.pick({ resamples: true, seed: true, halves: true, within: true, runs: true, queryRun: true }),
})
export type LabRunSpec = z.output<typeof LabRunSpec>

const StoredActor = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.string(),
  via: z.string(),
})
const RunMap = z.record(z.string(), z.string())

export const StartLabRunInput = z.object({
  studyId: id,
  datasetId: id,
  connectionId: z.string().min(1, 'Choose an LLM connection.').max(40),
  model: z.string().trim().max(200).optional(),
  prompts: LabRunSpec.shape.prompts,
  args: z.record(z.string(), z.string()).optional(),
})

export const promptName = (p: z.output<typeof Prompt>) => (p.paraphrase ? paraphraseName(p.paraphrase) : p.variant)

export interface LabRunProgress {
  prompt: string
  runId: string | null
  runStatus: string | null
  /** Labels done (sessions finished) of the dataset's items. */
  done: number
  total: number
  stalled: number
  stallError: string | null
}

export interface LabRunView {
  id: string
  datasetId: string
  status: 'queued' | 'running' | 'done' | 'failed'
  error: string | null
  attempts: number
  createdAt: string
  finishedAt: string | null
  progress: LabRunProgress[]
  /** The stored tables, once done. */
  result: { table: LabTable; runs: PromptLabRun[] } | null
  computeMs: number | null
}

type LabRow = NonNullable<Awaited<ReturnType<typeof db.labellingLabRun.findUnique>>>

/** The runs' sessions by state, one statement. */
async function sessionCounts(runIds: string[]) {
  if (!runIds.length) return new Map<string, { done: number; stalled: number; stallError: string | null }>()
  const rows = await db.$queryRawUnsafe<
    Array<{ runId: string; done: number; stalled: number; stallError: string | null }>
  >(
    `SELECT "runId", count(*) FILTER (WHERE status = 'done')::int AS done,
            count(*) FILTER (WHERE status = 'stalled')::int AS stalled,
            min("stallError") FILTER (WHERE status = 'stalled') AS "stallError"
     FROM "ProtocolSession" WHERE "runId" = ANY($1::text[]) GROUP BY "runId"`,
    runIds,
  )
  return new Map(rows.map((r) => [r.runId, r]))
}

/** Per prompt: its run, labels done of the items, stalled sessions and the first reason. */
export async function labProgress(lab: LabRow): Promise<LabRunProgress[]> {
  const spec = LabRunSpec.parse(lab.spec)
  const runs = RunMap.parse(lab.runs)
  const runIds = Object.values(runs)
  const [counts, runRows, total] = await Promise.all([
    sessionCounts(runIds),
    db.run.findMany({ where: { id: { in: runIds } }, select: { id: true, status: true } }),
    db.instance.count({ where: { datasetId: lab.datasetId } }),
  ])
  return spec.prompts.map((p) => {
    const prompt = promptName(p)
    const runId = runs[prompt] ?? null
    const c = runId ? counts.get(runId) : undefined
    return {
      prompt,
      runId,
      runStatus: runRows.find((r) => r.id === runId)?.status ?? null,
      done: c?.done ?? 0,
      total,
      stalled: c?.stalled ?? 0,
      stallError: c?.stallError ?? null,
    }
  })
}

const Status = z.enum(['queued', 'running', 'done', 'failed'])
const StoredResult = z.object({
  table: z.custom<LabTable>((v) => !!v && typeof v === 'object'),
  runs: z.array(z.custom<PromptLabRun>()),
})

export async function labRunView(lab: LabRow): Promise<LabRunView> {
  const result = lab.result === null ? null : StoredResult.safeParse(lab.result)
  return {
    id: lab.id,
    datasetId: lab.datasetId,
    status: Status.catch('failed').parse(lab.status),
    error: lab.error ?? (result && !result.success ? 'The stored result cannot be read.' : null),
    attempts: lab.attempts,
    createdAt: lab.createdAt.toISOString(),
    finishedAt: lab.finishedAt?.toISOString() ?? null,
    progress: await labProgress(lab),
    result: result?.success ? result.data : null,
    computeMs: lab.computeMs,
  }
}

/** A lab run the actor may see (study read) or act on (write): 404 otherwise, as for any resource of a study. */
async function findLab(actor: Actor, labRunId: string, need: 'read' | 'write') {
  const lab = await db.labellingLabRun.findUnique({ where: { id: labRunId } })
  if (!lab) throw notFound('No such lab run.')
  await requireStudyAccess(db, actor, lab.studyId, need)
  return lab
}

/** Start a lab run: checked, stored, on the queue; answers at once with its id. */
export async function startLabRun(actor: Actor, input: z.output<typeof StartLabRunInput>) {
  await requireStudyAccess(db, actor, input.studyId, 'write')
  const ds = await db.dataset.findFirst({
    where: { id: input.datasetId, studyId: input.studyId },
    select: { id: true, kind: true, status: true },
  })
  if (!ds) throw badRequest('No such dataset in this study.', { datasetId: ['Choose a dataset of the study.'] })
  if (!['labelling-items', 'trec'].includes(ds.kind) || ds.status !== 'ready')
    throw badRequest('The prompt lab runs on a ready labelling-items or trec dataset.', {
      datasetId: ['Not a gold dataset.'],
    })
  const conn = await db.llmConnection.findFirst({
    where: { id: input.connectionId, OR: [{ studyId: input.studyId }, { studyId: null }] },
    select: { id: true },
  })
  if (!conn) throw badRequest('No such LLM connection for this study.', { connectionId: ['Choose a connection.'] })
  const names = input.prompts.map(promptName)
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice) throw badRequest(`The prompt ${twice} is picked twice.`, { prompts: ['Each prompt once.'] })
  const args = PromptLabArgs.safeParse(input.args ?? {})
  if (!args.success) throw badRequest(args.error.issues[0]?.message ?? 'Bad table arguments.')
  const spec: LabRunSpec = LabRunSpec.parse({
    connectionId: input.connectionId,
    ...(input.model ? { model: input.model } : {}),
    prompts: input.prompts,
    args: args.data,
  })
  const who = { userId: actor.userId, email: actor.email, name: actor.name, role: actor.role, via: actor.via }
  const lab = await db.$transaction(async (tx) => {
    const row = await tx.labellingLabRun.create({
      data: { studyId: input.studyId, datasetId: ds.id, spec: spec as Prisma.InputJsonValue, actor: who },
    })
    await writeAudit(tx, {
      actor: actorRef(actor),
      action: 'labelling.lab-run.start',
      resourceType: 'labelling-lab-run',
      resourceId: row.id,
      studyId: input.studyId,
      after: { datasetId: ds.id, prompts: names },
    })
    return row
  })
  await enqueuePluginJob('labelling', LAB_RUN_JOB, { labRunId: lab.id })
  return { labRunId: lab.id, status: 'queued' as const }
}

async function fail(labRunId: string, error: string) {
  await db.labellingLabRun.update({
    where: { id: labRunId },
    data: { status: 'failed', error: error.slice(0, 2000), finishedAt: new Date() },
  })
}

/**
 * One pass of the `lab-run` job: create the missing runs, then either store the tables (every run
 * done), fail with the reason (a run's labels failed, a run was cancelled, a run could not be
 * created), or look again in LAB_POLL_SECONDS. Safe to run again: created runs are recorded one by
 * one and not created twice, a finished lab run is left alone, and one chain of jobs serves a lab run
 * (only a pass enqueues the next; Retry enqueues only once the chain ended at `failed`).
 */
export async function advanceLabRun(labRunId: string): Promise<void> {
  const lab = await db.labellingLabRun.findUnique({ where: { id: labRunId } })
  if (!lab || lab.status === 'done' || lab.status === 'failed') return
  try {
    const spec = LabRunSpec.parse(lab.spec)
    const actor = StoredActor.parse(lab.actor) as Actor
    const runs = RunMap.parse(lab.runs)
    if (lab.status === 'queued') await db.labellingLabRun.update({ where: { id: lab.id }, data: { status: 'running' } })
    for (const p of spec.prompts) {
      const prompt = promptName(p)
      if (runs[prompt]) continue
      const r = await execute(createRun, actor, {
        studyId: lab.studyId,
        protocol: 'labelling',
        name: `Prompt lab ${prompt} (${lab.id.slice(-6)})`,
        datasetId: lab.datasetId,
        config: {
          preset: 'relevance-0-2',
          labeller: { variant: p.variant, ...(p.paraphrase ? { paraphrase: p.paraphrase } : {}) },
        },
        seats: {
          annotator: {
            kind: 'llm',
            model: { connectionId: spec.connectionId, ...(spec.model ? { model: spec.model } : {}) },
          },
        },
        start: true,
      })
      if (!r.ok) return await fail(lab.id, `${prompt}: the run could not be created: ${r.error}`)
      runs[prompt] = r.data.id as string
      await db.labellingLabRun.update({ where: { id: lab.id }, data: { runs } })
    }
    const progress = await labProgress({ ...lab, runs })
    const broken = progress.find((p) => p.stalled > 0)
    if (broken)
      return await fail(
        lab.id,
        `${broken.prompt}: ${broken.stalled} of ${broken.total} labels failed: ${broken.stallError ?? 'the model did not answer'}`,
      )
    const cancelled = progress.find((p) => p.runStatus === 'cancelled' || p.runStatus === null)
    if (cancelled) return await fail(lab.id, `${cancelled.prompt}: its run was ${cancelled.runStatus ?? 'deleted'}.`)
    if (progress.some((p) => p.runStatus !== 'done')) {
      await enqueuePluginJob('labelling', LAB_RUN_JOB, { labRunId: lab.id }, { startAfterSeconds: LAB_POLL_SECONDS })
      return
    }
    // Every run is done: the tables, once, stored.
    const runRows = await db.run.findMany({
      where: { id: { in: Object.values(runs) } },
      select: { id: true, name: true, status: true },
    })
    const ordered = progress.map((p) => ({ ...runRows.find((r) => r.id === p.runId)!, prompt: p.prompt }))
    const [items, costs, trec] = await Promise.all([
      goldItems(lab.datasetId),
      labelsAndCosts(ordered),
      trecRunsOf(lab.studyId, spec.args),
    ])
    const t0 = performance.now()
    const table = promptLabTable(
      items,
      ordered.map((r) => ({ name: r.prompt, labels: costs.labelsByRun.get(r.id) ?? new Map() })),
      tableOptions(spec.args, trec.trecRuns, trec.tags, trec.queryRun),
    )
    const computeMs = Math.round(performance.now() - t0)
    await db.labellingLabRun.update({
      where: { id: lab.id },
      data: {
        status: 'done',
        error: null,
        result: JSON.parse(JSON.stringify({ table, runs: costs.runViews })),
        computeMs,
        finishedAt: new Date(),
      },
    })
  } catch (err) {
    // The database away: the queue retries the job. Anything else is this lab run's failure, said.
    if (isDatabaseUnavailable(err)) throw err
    await fail(lab.id, `internal: ${(err as Error).message}`).catch(() => {})
  }
}

/** The plugin's job kind. */
export const labRunJob: PluginJob<{ labRunId: string }> = {
  data: z.object({ labRunId: id }),
  run: ({ labRunId }) => advanceLabRun(labRunId),
}

export const startLabRunOp = defineOperation({
  name: 'labelling.lab-runs.start',
  scope: 'studies:update',
  input: StartLabRunInput,
  run: (actor, input) => startLabRun(actor, input),
})

/** A lab run's state and progress per prompt (study read); the stored tables once done. */
export const getLabRun = defineOperation({
  name: 'labelling.lab-runs.get',
  scope: 'studies:read',
  input: z.object({ labRunId: id }),
  async run(actor, { labRunId }) {
    return labRunView(await findLab(actor, labRunId, 'read'))
  },
})

/** A failed lab run again: its stalled sessions back on the queue, and the job with them (study write). */
export const retryLabRun = defineOperation({
  name: 'labelling.lab-runs.retry',
  scope: 'studies:update',
  input: z.object({ labRunId: id }),
  async run(actor, { labRunId }) {
    const lab = await findLab(actor, labRunId, 'write')
    if (lab.status !== 'failed') throw badRequest(`Only a failed lab run can be retried; this one is ${lab.status}.`)
    const progress = await labProgress(lab)
    for (const p of progress)
      if (p.runId && p.stalled > 0) {
        const r = await execute(retryStalled, actor, { runId: p.runId })
        if (!r.ok && r.status !== 409) throw badRequest(`${p.prompt}: ${r.error}`)
      }
    await db.$transaction(async (tx) => {
      await tx.labellingLabRun.update({
        where: { id: lab.id },
        data: { status: 'queued', error: null, finishedAt: null, attempts: { increment: 1 } },
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'labelling.lab-run.retry',
        resourceType: 'labelling-lab-run',
        resourceId: lab.id,
        studyId: lab.studyId,
        before: { status: 'failed', error: lab.error },
        after: { status: 'queued' },
      })
    })
    await enqueuePluginJob('labelling', LAB_RUN_JOB, { labRunId: lab.id })
    return { labRunId: lab.id, status: 'queued' as const }
  },
})

/** The study's lab runs over a dataset, newest first (for the page's list). */
export async function labRunsOf(studyId: string, datasetId: string) {
  const rows = await db.labellingLabRun.findMany({
    where: { studyId, datasetId },
    orderBy: { createdAt: 'desc' },
    take: 20,
    select: { id: true, status: true, createdAt: true, spec: true, error: true },
  })
  return rows.map((r) => {
    const spec = LabRunSpec.safeParse(r.spec)
    return {
      id: r.id,
      status: r.status,
      createdAt: r.createdAt.toISOString(),
      prompts: spec.success ? spec.data.prompts.map(promptName) : [],
      error: r.error,
    }
  })
}
