import { z } from 'zod'
import { type Actor, AppError, db, hasScope, requireStudyAccess } from '@/lib/server/sdk'
import { type LabItem, type LabTable, type LabVariant, promptLabTable } from '@/protocols/labelling/core/prompt-lab'
import { paraphraseName, TABLE2_ORDER } from '@/protocols/labelling/core/variants'
import type { LabRunView } from '@/protocols/labelling/server/lab-runs'

/**
 * The prompt lab (reference Part B, §B.4, §B.5.2–B.5.7): every LLM-labeller run of the study over one
 * gold `labelling-items` dataset, one row per prompt (the run config's `labeller.variant`, or its
 * paraphrase `-DNA-/p1`), with the paper's Table 2, Table 3, split-half stability and the cost and
 * latency per label from the LLM call rows. Staff only (write access and `exports:read`, as ReHAC's
 * training page): gold labels are shown in aggregate.
 *
 * The tables are computed in the request, bounded (≤ 1,000 resamples) and cached per (dataset, the
 * runs, their message count and last message time, the arguments): 32 variants × 3,000 items with 20
 * resamples and 1,000 split halves take about 1 s (bench:labelling), so a page view after the first is
 * free until a label arrives.
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

const LabellerConfig = z
  .object({
    labeller: z
      .object({
        variant: z.string(),
        paraphrase: z.object({ parent: z.string(), id: z.string() }).optional(),
      })
      .optional(),
  })
  .passthrough()

const LlmSeats = z.object({ annotator: z.object({ kind: z.literal('llm') }).passthrough() }).passthrough()

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

export interface PromptLabData {
  kind: 'prompt-lab'
  datasets: Array<{ id: string; name: string; items: number }>
  dataset: { id: string; name: string; items: number; withGold: number } | null
  args: PromptLabArgs
  error: string | null
  runs: PromptLabRun[]
  /** Several runs with one prompt: the newest counts, the others are listed here. */
  duplicates: string[]
  table: LabTable | null
  computeMs: number | null
  cached: boolean
  variants: readonly string[]
  canWrite: boolean
  /** The study's `trec-runs` datasets, the one used, and its run tags. */
  runDatasets: Array<{ id: string; name: string }>
  runDataset: { id: string; name: string; tags: string[] } | null
  /** The LLM connections the study may use, its own and the global ones (for the Run form). */
  connections: Array<{ id: string; name: string; model: string }>
  /** The study's lab runs over this dataset (newest first) and the one shown (args.lab, else the newest). */
  labRuns: Array<{ id: string; status: string; createdAt: string; prompts: string[]; error: string | null }>
  labRun: LabRunView | null
  /** The dataset's first query–document item, for the prompt preview (null when it has none). */
  sample: { query: string; description?: string; narrative?: string; document: string } | null
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

const cache = new Map<string, { table: LabTable; ms: number }>()
const CACHE_MAX = 20

/** Gold items, the LLM-labeller runs and their labels over one dataset of the study; then the tables. */
export async function promptLabPage(
  actor: Actor,
  studyId: string,
  raw: Record<string, string>,
): Promise<PromptLabData> {
  const { access } = await requireStudyAccess(db, actor, studyId, 'read')
  const canWrite = access.includes('write') && hasScope(actor.role, 'exports:read')
  if (!canWrite) throw new AppError(403, 'The prompt lab is for the study’s staff (write access).')
  const datasets = (
    await db.dataset.findMany({
      where: { studyId, kind: { in: ['labelling-items', 'trec'] }, status: 'ready' },
      select: { id: true, name: true, _count: { select: { instances: true } } },
      orderBy: { createdAt: 'asc' },
    })
  ).map((d) => ({ id: d.id, name: d.name, items: d._count.instances }))
  const parsed = PromptLabArgs.safeParse(raw)
  const args = parsed.success ? parsed.data : PromptLabArgs.parse({})
  const base: PromptLabData = {
    kind: 'prompt-lab',
    datasets,
    dataset: null,
    args,
    error: parsed.success ? null : (parsed.error.issues[0]?.message ?? 'bad arguments'),
    runs: [],
    duplicates: [],
    table: null,
    computeMs: null,
    cached: false,
    variants: TABLE2_ORDER,
    canWrite,
    connections: (
      await db.llmConnection.findMany({
        // The study's connections and the global ones (the demo model among them), as the set-up forms offer.
        where: { OR: [{ studyId }, { studyId: null }] },
        select: { id: true, name: true, defaultModel: true },
        orderBy: { name: 'asc' },
      })
    ).map((c) => ({ id: c.id, name: c.name, model: c.defaultModel })),
    sample: null,
    labRuns: [],
    labRun: null,
    runDatasets: [],
    runDataset: null,
  }
  const chosen = datasets.find((d) => d.id === (args.dataset ?? datasets[0]?.id))
  if (!chosen) return { ...base, error: args.dataset ? 'No such labelling-items dataset in this study.' : base.error }

  const items = await goldItems(chosen.id)
  const firstRow = await db.instance.findFirst({
    where: { datasetId: chosen.id, input: { path: ['kind'], equals: 'query-doc' } },
    select: { input: true },
    orderBy: { index: 'asc' },
  })
  const first = firstRow?.input as
    | { query?: string; description?: string; narrative?: string; document?: string }
    | undefined
  base.sample =
    first?.query && first.document
      ? {
          query: first.query,
          document: first.document.slice(0, 4000),
          ...(first.description ? { description: first.description } : {}),
          ...(first.narrative ? { narrative: first.narrative } : {}),
        }
      : null
  const dataset = { ...chosen, withGold: items.length }
  // Loaded here: lab-runs.ts builds on this module's exports.
  const { labRunsOf, labRunView } = await import('@/protocols/labelling/server/lab-runs')
  base.labRuns = await labRunsOf(studyId, chosen.id)
  const labId = args.lab ?? base.labRuns[0]?.id
  if (labId) {
    const row = await db.labellingLabRun.findFirst({ where: { id: labId, studyId, datasetId: chosen.id } })
    if (row) base.labRun = await labRunView(row)
    else base.error = 'No such lab run of this dataset.'
  }

  const runRows = await db.run.findMany({
    where: { studyId, protocol: 'labelling', datasetId: chosen.id },
    select: { id: true, name: true, status: true, config: true, seats: true, createdAt: true },
    orderBy: { createdAt: 'desc' },
  })
  const byPrompt = new Map<string, (typeof runRows)[number] & { prompt: string }>()
  const duplicates: string[] = []
  for (const r of runRows) {
    if (!LlmSeats.safeParse(r.seats).success) continue
    const c = LabellerConfig.safeParse(r.config)
    const l = c.success ? c.data.labeller : undefined
    const prompt = l ? (l.paraphrase ? paraphraseName(l.paraphrase) : l.variant) : '-DNA-'
    if (byPrompt.has(prompt)) duplicates.push(`${r.name} (${prompt})`)
    else byPrompt.set(prompt, { ...r, prompt })
  }
  const runs = [...byPrompt.values()]
  const order = (p: string) => {
    const i = TABLE2_ORDER.indexOf(p.split('/')[0]!)
    return i < 0 ? 99 : i
  }
  runs.sort((a, b) => order(a.prompt) - order(b.prompt) || (a.prompt < b.prompt ? -1 : 1))
  const runIds = runs.map((r) => r.id)
  if (!runIds.length) return { ...base, dataset, duplicates }

  const { labelsByRun, runViews, labelRows, last } = await labelsAndCosts(runs)

  const { runDatasets, runDs, trecRuns, tags, queryRun } = await trecRunsOf(studyId, args)
  base.runDatasets = runDatasets
  base.runDataset = runDs ? { ...runDs, tags } : null
  if (args.runs && !runDs) base.error = 'No such trec-runs dataset in this study.'
  if (args.queryRun && queryRun !== args.queryRun) base.error = `No run "${args.queryRun}" in the run file.`

  const variants: LabVariant[] = runs.map((r) => ({ name: r.prompt, labels: labelsByRun.get(r.id) ?? new Map() }))
  const key = JSON.stringify([
    chosen.id,
    runIds,
    labelRows,
    last,
    { ...args, lab: null },
    runDs?.id ?? null,
    queryRun ?? null,
  ])
  const hit = cache.get(key)
  let table: LabTable
  let ms: number
  if (hit) ({ table, ms } = hit)
  else {
    const t0 = performance.now()
    table = promptLabTable(items, variants, tableOptions(args, trecRuns, tags, queryRun))
    ms = performance.now() - t0
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!)
    cache.set(key, { table, ms })
  }
  return { ...base, dataset, runs: runViews, duplicates, table, computeMs: Math.round(ms), cached: !!hit }
}

/** `views.studyPage` of the labelling protocol for `prompt-lab`; null (404) for any other path. */
export async function promptLabStudyPage(
  actor: Actor,
  studyId: string,
  path: string[],
  args: Record<string, string>,
): Promise<{ title: string; data: unknown } | null> {
  if (path.length === 1 && path[0] === 'prompt-lab')
    return { title: 'Prompt lab', data: await promptLabPage(actor, studyId, args) }
  return null
}
