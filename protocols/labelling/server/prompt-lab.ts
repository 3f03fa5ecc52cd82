import { z } from 'zod'
import { type Actor, AppError, db, hasScope, requireStudyAccess } from '@/lib/server/sdk'
import { type LabTable, type LabVariant, promptLabTable } from '@/protocols/labelling/core/prompt-lab'
import { paraphraseName, TABLE2_ORDER } from '@/protocols/labelling/core/variants'
import {
  goldItems,
  labelsAndCosts,
  PromptLabArgs,
  type PromptLabRun,
  tableOptions,
  trecRunsOf,
} from '@/protocols/labelling/server/lab-data'
import { type LabRunView, labRunsOf, labRunView } from '@/protocols/labelling/server/lab-runs'

export { goldOf, labelOf, PromptLabArgs, type PromptLabRun } from '@/protocols/labelling/server/lab-data'

/**
 * The prompt lab (reference Part B, §B.4, §B.5.2–B.5.7): every LLM-labeller run of the study over one
 * gold `labelling-items` dataset, one row per prompt (the run config's `labeller.variant`, or its
 * paraphrase `-DNA-/p1`), with the paper's Table 2, Table 3, split-half stability and the cost and
 * latency per label from the LLM call rows. Staff only (write access and `exports:read`, as ReHAC's
 * training page): gold labels are shown in aggregate.
 *
 * Without a lab run, the tables are computed in the request, bounded (≤ 1,000 resamples) and cached per (dataset, the
 * runs, their message count and last message time, the arguments): 32 variants × 3,000 items with 20
 * resamples and 1,000 split halves take about 1 s (bench:labelling), so a page view after the first is
 * free until a label arrives. A lab run (lab-runs.ts) is the prompts picked here run on the job
 * queue, with its tables stored once every label is in; the page shows it (args.lab, else the newest).
 */

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
