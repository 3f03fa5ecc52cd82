import { z } from 'zod'
import { db } from '@/lib/server/sdk'
import type { LabItem } from '@/protocols/labelling/core/prompt-lab'

/**
 * What the prompt lab's page (prompt-lab.ts) and its lab runs on the job queue (lab-runs.ts) both
 * read: the table arguments, the gold items of a dataset, the LLM-labeller runs' labels and costs, the
 * stored TREC runs.
 */

const Flag = z.enum(['0', '1']).default('0')
export const PromptLabArgs = z.object({
  dataset: z.string().trim().max(40).optional(),
  within: Flag,
  resamples: z.coerce.number().int().min(2, 'at least 2 resamples').max(1000, 'at most 1,000 resamples').default(20),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31)
    .default(1),
  halves: z.coerce.number().int().min(0).max(5000, 'at most 5,000 split halves').default(1000),
  /** A `trec-runs` dataset of the study (default: the newest), and the run whose per-query RBP orders the queries. */
  runs: z.string().trim().max(40).optional(),
  queryRun: z.string().trim().max(200).optional(),
  /** A lab run of the study to show (default: the dataset's newest). */
  lab: z.string().trim().max(40).optional(),
})
export type PromptLabArgs = z.output<typeof PromptLabArgs>

/** A gold `prediction` read as a number: a number, or an object whose overall answer (`O`, else the one numeric answer) is one. */
export function goldOf(prediction: string): number | null {
  let v: unknown
  try {
    v = JSON.parse(prediction)
  } catch {
    const n = Number(prediction)
    return prediction.trim() !== '' && Number.isFinite(n) ? n : null
  }
  if (typeof v === 'number' && Number.isFinite(v)) return v
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>
    if (typeof o.O === 'number') return o.O
    const nums = Object.values(o).filter((x): x is number => typeof x === 'number')
    if (nums.length === 1) return nums[0]!
  }
  return null
}

/** A label message's value: the overall answer `O`, else its one numeric answer. */
export function labelOf(answers: unknown): number | null {
  if (!answers || typeof answers !== 'object') return null
  const o = answers as Record<string, unknown>
  if (typeof o.O === 'number') return o.O
  const nums = Object.values(o).filter((x): x is number => typeof x === 'number')
  return nums.length === 1 ? nums[0]! : null
}

export interface PromptLabRun {
  runId: string
  name: string
  prompt: string
  status: string
  /** Per label (LLM call rows of the run's sessions; a cached replay costs nothing). */
  calls: number
  costPerLabel: number | null
  latencyMsPerLabel: number | null
  tokensInPerLabel: number | null
  tokensOutPerLabel: number | null
}

/** The gold items of a dataset: ids and gold only (documents may be long); items without a readable gold are left out. */
export async function goldItems(datasetId: string): Promise<LabItem[]> {
  const instances = await db.$queryRawUnsafe<
    Array<{ id: string | null; topic: string | null; doc: string | null; prediction: string }>
  >(
    `SELECT input->>'id' AS id, input->>'topicId' AS topic, input->>'docId' AS doc, prediction
     FROM "Instance" WHERE "datasetId" = $1 ORDER BY index`,
    datasetId,
  )
  const items: LabItem[] = []
  for (const inst of instances) {
    const gold = goldOf(inst.prediction)
    if (!inst.id || gold === null) continue
    items.push({ id: inst.id, topic: inst.topic ?? inst.id, docid: inst.doc ?? inst.id, gold })
  }
  return items
}

/** The labels of LLM-labeller runs (one statement) and their cost and latency per label from the LLM call rows (one more). */
export async function labelsAndCosts(runs: Array<{ id: string; name: string; prompt: string; status: string }>) {
  const runIds = runs.map((r) => r.id)
  const labelRows = runIds.length
    ? await db.$queryRawUnsafe<Array<{ runId: string; item: string; kind: string; answers: unknown; at: Date }>>(
        `SELECT ps."runId", ps.instance->>'id' AS item, m.body->>'kind' AS kind, m.body->'answers' AS answers, m."createdAt" AS at
         FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id
         WHERE ps."runId" = ANY($1::text[]) AND m.body->>'kind' IN ('label', 'unparseable')`,
        runIds,
      )
    : []
  const costRows = runIds.length
    ? await db.$queryRawUnsafe<
        Array<{ runId: string; calls: number; cost: number | null; latency: number | null; tin: number; tout: number }>
      >(
        `SELECT ps."runId", count(c.id)::int AS calls, sum(c."costUsd")::float8 AS cost,
            avg(c."latencyMs")::float8 AS latency, coalesce(sum(c."tokensIn"), 0)::float8 AS tin,
            coalesce(sum(c."tokensOut"), 0)::float8 AS tout
         FROM "ProtocolSession" ps JOIN "LlmCall" c ON c."sessionRef" = ps.id
         WHERE ps."runId" = ANY($1::text[])
         GROUP BY ps."runId"`,
        runIds,
      )
    : []
  const labelsByRun = new Map<string, Map<string, number | null>>()
  let last = 0
  for (const r of labelRows) {
    const m = labelsByRun.get(r.runId) ?? new Map<string, number | null>()
    m.set(r.item, r.kind === 'label' ? labelOf(r.answers) : null)
    labelsByRun.set(r.runId, m)
    last = Math.max(last, r.at.getTime())
  }
  const costs = new Map(costRows.map((c) => [c.runId, c]))
  const runViews: PromptLabRun[] = runs.map((r) => {
    const c = costs.get(r.id)
    const n = labelsByRun.get(r.id)?.size ?? 0
    return {
      runId: r.id,
      name: r.name,
      prompt: r.prompt,
      status: r.status,
      calls: c?.calls ?? 0,
      costPerLabel: c?.cost != null && n ? c.cost / n : null,
      latencyMsPerLabel: c?.latency ?? null,
      tokensInPerLabel: c && n ? c.tin / n : null,
      tokensOutPerLabel: c && n ? c.tout / n : null,
    }
  })
  return { labelsByRun, runViews, labelRows: labelRows.length, last }
}

/** The study's stored TREC runs (`trec-runs` datasets): the one asked for (default the newest), per tag, per topic, the ranked document ids. */
export async function trecRunsOf(studyId: string, args: Pick<PromptLabArgs, 'runs' | 'queryRun'>) {
  const runDatasets = await db.dataset.findMany({
    where: { studyId, kind: 'trec-runs', status: 'ready' },
    select: { id: true, name: true },
    orderBy: { createdAt: 'desc' },
  })
  const runDs = args.runs ? runDatasets.find((r) => r.id === args.runs) : runDatasets[0]
  let trecRuns: Record<string, Record<string, string[]>> | undefined
  if (runDs) {
    const rows = await db.instance.findMany({
      where: { datasetId: runDs.id },
      select: { input: true },
      orderBy: { index: 'asc' },
    })
    trecRuns = {}
    for (const r of rows) {
      const v = r.input as { tag?: string; topics?: Record<string, string[]> }
      if (v.tag && v.topics) trecRuns[v.tag] = v.topics
    }
  }
  const tags = trecRuns ? Object.keys(trecRuns).sort() : []
  const queryRun = args.queryRun && tags.includes(args.queryRun) ? args.queryRun : tags[0]
  return { runDatasets, runDs, trecRuns, tags, queryRun }
}

/** promptLabTable's options from the page's (or a lab run's) arguments. */
export function tableOptions(
  args: Pick<PromptLabArgs, 'resamples' | 'seed' | 'within' | 'halves'>,
  trecRuns: Record<string, Record<string, string[]>> | undefined,
  tags: string[],
  queryRun: string | undefined,
) {
  return {
    resamples: args.resamples,
    seed: args.seed,
    aucWithinTopics: args.within === '1',
    splitHalfIterations: args.halves,
    ...(trecRuns && tags.length ? { runs: trecRuns, queryRun } : {}),
  }
}
