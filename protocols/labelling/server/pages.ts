import { z } from 'zod'
import {
  agreementOfLabels,
  ALPHA_LEVELS,
  type AlphaLevel,
  bootstrap,
  bootstrapKappa,
  fleissKappa,
  krippendorffAlpha,
  pairwiseAccuracy,
  pairwiseKappa,
  perRaterAgreement,
} from '@/lib/metrics/agreement'
import { type Actor, AppError, db, hasScope, requireStudyAccess } from '@/lib/server/sdk'
import { LabellingConfig, type LabelSchema, type OptionValue, type Question } from '@/protocols/labelling/core'
import { majorityOf } from '@/protocols/labelling/core/majority'

/**
 * Labelling's pages under a study (issue 25), staff only (write access to the study and the
 * `exports:read` scope, as the exports: an annotator never sees another's label here):
 *   /studies/{id}/p/labelling/project/{runId}?page=&annotator=&item=&disagree=1&pseudo=1
 *       progress per annotator and per item, and the label browser
 *   /studies/{id}/p/labelling/agreement/{runId}?question=&level=&compare={runId}&resamples=&seed=&pseudo=1
 *       Fleiss κ, Krippendorff α, pairwise κ, per-annotator agreement, against gold, against another run
 *   /studies/{id}/p/labelling/adjudicate/{runId}?against=annotators|gold|compare&compare=&question=&pseudo=1
 *       the disputed items side by side with their final labels (server/adjudication.ts)
 * Both read the labels with SQL over the message rows (one row per label, one GROUP BY per item and
 * category), never by replaying sessions: 10,000 items × 3 labels stay one pass.
 */

const segment = z.string().min(1).max(100)
const flag = z
  .enum(['1', '0', 'true', 'false', 'on', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'on')

export const ProjectArgs = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  /** The label browser's page (the items table has `page`). */
  lpage: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  annotator: z.string().trim().max(200).optional(),
  item: z.string().trim().max(200).optional(),
  disagree: flag,
  short: flag,
  pseudo: flag,
})

export const AgreementArgs = z.object({
  question: z.string().trim().max(32).optional(),
  level: z.enum(ALPHA_LEVELS as unknown as [AlphaLevel, ...AlphaLevel[]]).optional(),
  compare: z.string().trim().max(100).optional(),
  resamples: z.coerce.number().int().min(1).max(1000).default(20),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31)
    .default(1),
  pseudo: flag,
})

/**
 * The agreement and adjudication pages: whoever adjudicates in the study (its admins, researchers and
 * adjudicators: the study permission `adjudicate`, study-roles.ts); annotators and viewers are refused.
 */
async function requireAdjudicator(actor: Actor, studyId: string) {
  await requireStudyAccess(db, actor, studyId, 'adjudicate')
}

/** Staff only: a study writer with the exports scope (annotators, viewers and adjudicators are refused). */
async function requireStaff(actor: Actor, studyId: string) {
  await requireStudyAccess(db, actor, studyId, 'write')
  if (!hasScope(actor.role, 'exports:read'))
    throw new AppError(403, 'Only researchers and admins see a labelling project’s labels.')
}

interface RunInfo {
  id: string
  name: string
  datasetId: string
  repetitions: number
  schema: LabelSchema
}

async function runOf(studyId: string, runId: string): Promise<RunInfo | null> {
  const run = await db.run.findUnique({
    where: { id: runId },
    select: { id: true, studyId: true, protocol: true, name: true, datasetId: true, repetitions: true, config: true },
  })
  if (!run || run.studyId !== studyId || run.protocol !== 'labelling') return null
  const c = LabellingConfig.safeParse(run.config)
  if (!c.success) return null
  return { id: run.id, name: run.name, datasetId: run.datasetId, repetitions: run.repetitions, schema: c.data.schema }
}

/** One label: the session's one message (kind 'label'), its annotator key and its answer to a question. */
export interface LabelCell {
  position: number
  itemId: string
  annotator: string
  value: OptionValue | null
  gold: string | null
}

/** The annotator of a label in SQL: the person who wrote it, else `llm:<model>` of the seat. */
const ANNOTATOR = `coalesce(m."authorUserId", 'llm:' || coalesce(ps.seats->'annotator'->'model'->>'model', ps.seats->'annotator'->'model'->>'connectionId', '?'))`

/**
 * The annotator × item matrix of one question: one row per label of the run (the one SQL query the
 * agreement figures start from), with the item's gold from its dataset instance.
 */
export async function labelCells(runId: string, question: string): Promise<LabelCell[]> {
  return db.$queryRawUnsafe<LabelCell[]>(
    `SELECT ps.position, coalesce(ps.instance->>'id', ps.position::text) AS "itemId",
            ${ANNOTATOR} AS annotator, m.body->'answers'->$2 AS value, i.prediction AS gold
     FROM "ProtocolSession" ps
     JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
     LEFT JOIN "Instance" i ON i.id = ps."instanceId"
     WHERE ps."runId" = $1 AND m.body->>'kind' = 'label'
     ORDER BY ps.position, ps.repetition`,
    runId,
    question,
  )
}

/** Per item and category of a question: how many labels (the GROUP BY behind Fleiss' κ). */
export async function categoryCounts(
  runId: string,
  question: string,
): Promise<Array<{ position: number; value: OptionValue; n: number }>> {
  return db.$queryRawUnsafe(
    `SELECT ps.position, m.body->'answers'->$2 AS value, count(*)::int AS n
     FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
     WHERE ps."runId" = $1 AND m.body->>'kind' = 'label' AND m.body->'answers' ? $2
     GROUP BY ps.position, m.body->'answers'->$2
     ORDER BY ps.position`,
    runId,
    question,
  )
}

/** Annotators of a run in a stable order (first label, then key), with their names and pseudonyms. */
async function annotatorsOf(runId: string) {
  const rows = await db.$queryRawUnsafe<
    Array<{ key: string; name: string | null; labels: number; medianMs: number | null; lastAt: Date; firstAt: Date }>
  >(
    `SELECT ${ANNOTATOR} AS key, max(u.name) AS name, count(*)::int AS labels,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY (m.body->>'elapsedMs')::float8) AS "medianMs",
            max(m."createdAt") AS "lastAt", min(m."createdAt") AS "firstAt"
     FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
     LEFT JOIN "user" u ON u.id = m."authorUserId"
     WHERE ps."runId" = $1 AND m.body->>'kind' = 'label'
     GROUP BY 1 ORDER BY min(m."createdAt"), 1`,
    runId,
  )
  return rows.map((r, i) => ({
    ...r,
    name: r.key.startsWith('llm:') ? r.key.slice(4) : (r.name ?? r.key),
    pseudonym: `Annotator ${i + 1}`,
  }))
}

// ───────────────────────────── the project page ─────────────────────────────

export interface ProjectPageData {
  kind: 'project'
  run: { id: string; name: string; slots: number }
  schema: LabelSchema
  pseudo: boolean
  totals: { items: number; labels: number; complete: number; short: number; sessions: number }
  annotators: Array<{ key: string; name: string; labels: number; medianMs: number | null; lastAt: string }>
  items: {
    page: number
    pageSize: number
    total: number
    rows: Array<{ position: number; itemId: string; labels: number; status: 'complete' | 'short'; disagree: boolean }>
  }
  labels: {
    page: number
    pageSize: number
    total: number
    rows: Array<{
      sessionId: string
      position: number
      itemId: string
      annotator: string
      answers: Record<string, OptionValue>
      rationale: string | null
      schemaVersion: number | null
      elapsedMs: number | null
      createdAt: string
    }>
  }
  filters: { annotator: string | null; item: string | null; disagree: boolean; short: boolean }
}

export async function projectPage(
  studyId: string,
  runId: string,
  raw: Record<string, string>,
): Promise<ProjectPageData | null> {
  const run = await runOf(studyId, runId)
  if (!run) return null
  const args = ProjectArgs.parse(raw)
  const annotators = await annotatorsOf(runId)
  const shown = (key: string) => {
    const a = annotators.find((x) => x.key === key)
    return args.pseudo ? (a?.pseudonym ?? 'Annotator ?') : (a?.name ?? key)
  }
  // The annotator filter names a key or, with pseudonyms on, "Annotator i".
  const annotatorKey = args.annotator
    ? (annotators.find((a) => a.key === args.annotator || a.pseudonym === args.annotator)?.key ?? args.annotator)
    : null
  const overall = run.schema.overall
  const perItem = await db.$queryRawUnsafe<
    Array<{ position: number; itemId: string; labels: number; distinct: number; total: number; complete: number }>
  >(
    `WITH it AS (
       SELECT ps.position, coalesce(min(ps.instance->>'id'), ps.position::text) AS "itemId",
              (count(m.id) FILTER (WHERE m.body->>'kind' = 'label'))::int AS labels,
              (count(DISTINCT m.body->'answers'->$2) FILTER (WHERE m.body->>'kind' = 'label'))::int AS "distinct"
       FROM "ProtocolSession" ps LEFT JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
       WHERE ps."runId" = $1 GROUP BY ps.position
     ), f AS (
       SELECT * FROM it WHERE ($3::boolean IS NOT TRUE OR "distinct" > 1)
                          AND ($4::boolean IS NOT TRUE OR labels < $5)
                          AND ($6::text IS NULL OR "itemId" = $6)
     )
     SELECT f.*, (SELECT count(*) FROM f)::int AS total,
            (SELECT count(*) FROM it WHERE labels >= $5)::int AS complete
     FROM f ORDER BY position LIMIT $7 OFFSET $8`,
    runId,
    overall,
    args.disagree,
    args.short,
    run.repetitions,
    args.item ?? null,
    args.pageSize,
    (args.page - 1) * args.pageSize,
  )
  const counts = await db.$queryRawUnsafe<Array<{ items: number; sessions: number; labels: number }>>(
    `SELECT count(DISTINCT ps.position)::int AS items, count(*)::int AS sessions,
            (count(m.id) FILTER (WHERE m.body->>'kind' = 'label'))::int AS labels
     FROM "ProtocolSession" ps LEFT JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
     WHERE ps."runId" = $1`,
    runId,
  )
  const c = counts[0] ?? { items: 0, sessions: 0, labels: 0 }
  const complete =
    perItem[0]?.complete ??
    (
      await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM (SELECT ps.position FROM "ProtocolSession" ps
         JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1 AND m.body->>'kind' = 'label'
         WHERE ps."runId" = $1 GROUP BY ps.position HAVING count(*) >= $2) x`,
        runId,
        run.repetitions,
      )
    )[0]?.n ??
    0
  const labelWhere = `ps."runId" = $1 AND m.body->>'kind' = 'label'
       AND ($2::text IS NULL OR ${ANNOTATOR} = $2)
       AND ($3::text IS NULL OR ps.instance->>'id' = $3)
       AND ($4::boolean IS NOT TRUE OR ps.position IN (
             SELECT p2.position FROM "ProtocolSession" p2 JOIN "ProtocolMessage" m2 ON m2."sessionId" = p2.id AND m2.seq = 1
             WHERE p2."runId" = $1 AND m2.body->>'kind' = 'label'
             GROUP BY p2.position HAVING count(DISTINCT m2.body->'answers'->$5) > 1))`
  const labelRows = await db.$queryRawUnsafe<
    Array<{
      sessionId: string
      position: number
      itemId: string
      annotator: string
      body: {
        answers?: Record<string, OptionValue>
        rationale?: string
        schemaVersion?: number
        elapsedMs?: number
      }
      createdAt: Date
      total: number
    }>
  >(
    `SELECT ps.id AS "sessionId", ps.position, coalesce(ps.instance->>'id', ps.position::text) AS "itemId",
            ${ANNOTATOR} AS annotator, m.body, m."createdAt", count(*) OVER ()::int AS total
     FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
     WHERE ${labelWhere}
     ORDER BY ps.position, m."createdAt", ps.id LIMIT $6 OFFSET $7`,
    runId,
    annotatorKey,
    args.item ?? null,
    args.disagree,
    overall,
    args.pageSize,
    (args.lpage - 1) * args.pageSize,
  )
  return {
    kind: 'project',
    run: { id: run.id, name: run.name, slots: run.repetitions },
    schema: run.schema,
    pseudo: args.pseudo,
    totals: { items: c.items, labels: c.labels, complete, short: c.items - complete, sessions: c.sessions },
    annotators: annotators.map((a) => ({
      key: args.pseudo ? a.pseudonym : a.key,
      name: args.pseudo ? a.pseudonym : a.name,
      labels: a.labels,
      medianMs: a.medianMs,
      lastAt: a.lastAt.toISOString(),
    })),
    items: {
      page: args.page,
      pageSize: args.pageSize,
      total: perItem[0]?.total ?? 0,
      rows: perItem.map((r) => ({
        position: r.position,
        itemId: r.itemId,
        labels: r.labels,
        status: r.labels >= run.repetitions ? 'complete' : 'short',
        disagree: r.distinct > 1,
      })),
    },
    labels: {
      page: args.lpage,
      pageSize: args.pageSize,
      total: labelRows[0]?.total ?? 0,
      rows: labelRows.map((r) => ({
        sessionId: r.sessionId,
        position: r.position,
        itemId: r.itemId,
        annotator: shown(r.annotator),
        answers: r.body.answers ?? {},
        rationale: r.body.rationale ?? null,
        schemaVersion: r.body.schemaVersion ?? null,
        elapsedMs: r.body.elapsedMs ?? null,
        createdAt: r.createdAt.toISOString(),
      })),
    },
    filters: { annotator: args.annotator ?? null, item: args.item ?? null, disagree: args.disagree, short: args.short },
  }
}

// ───────────────────────────── the agreement page ─────────────────────────────

/** A category as a number for α and the gold figures: its value when every option is a number, else its index. */
export function numericOf(q: Question): (v: OptionValue | null) => number | null {
  const numeric = q.options.every((o) => typeof o.value === 'number')
  return (v) => {
    if (v === null) return null
    if (numeric) return typeof v === 'number' ? v : null
    const i = q.options.findIndex((o) => o.value === v || String(o.value) === String(v))
    return i < 0 ? null : i
  }
}

/** The gold of an instance (its prediction, JSON or text) as the option it names, else null. */
function goldOf(q: Question, raw: string | null): OptionValue | null {
  if (raw === null || raw.trim() === '') return null
  let v: unknown = raw
  try {
    v = JSON.parse(raw)
  } catch {}
  if (typeof v === 'object' && v !== null && q.id in v) v = (v as Record<string, unknown>)[q.id]
  return q.options.find((o) => o.value === v || String(o.value) === String(v))?.value ?? null
}

interface Interval {
  estimate: number | null
  lo: number | null
  hi: number | null
}
const ci = (b: { estimate: number | null; lo: number | null; hi: number | null }): Interval => ({
  estimate: b.estimate,
  lo: b.lo,
  hi: b.hi,
})

export interface VersusGold {
  who: string
  n: number
  confusion: { model0_gold0: number; model0_gold1: number; model1_gold0: number; model1_gold1: number }
  accuracy: number | null
  kappa: Interval
  maeBinary: number | null
  maeGraded: number | null
  pAgreeModel0: number | null
  pAgreeModel1: number | null
  auc: Interval
}

function versus(who: string, gold: number[], model: number[], resamples: number, seed: number): VersusGold {
  const a = agreementOfLabels(gold, model)
  const auc = bootstrap(
    gold.length,
    (idx) => {
      const g: number[] = []
      const s: number[] = []
      for (const i of idx) {
        g.push(gold[i] as number)
        s.push(model[i] as number)
      }
      return pairwiseAccuracy(g, s).auc
    },
    { resamples, seed },
  )
  return {
    who,
    n: a.n,
    confusion: a.confusion,
    accuracy: a.accuracy,
    kappa: ci(bootstrapKappa(gold, model, { resamples, seed })),
    maeBinary: a.maeBinary,
    maeGraded: a.maeGraded,
    pAgreeModel0: a.pAgreeModel0,
    pAgreeModel1: a.pAgreeModel1,
    auc: ci(auc),
  }
}

export interface AgreementPageData {
  kind: 'agreement'
  run: { id: string; name: string; slots: number }
  questions: Array<{ id: string; text: string; type: string }>
  question: string
  level: AlphaLevel
  resamples: number
  seed: number
  pseudo: boolean
  categories: OptionValue[]
  items: number
  labels: number
  annotators: Array<{ key: string; name: string; labels: number }>
  fleiss: { kappa: number | null; items: number; raters: number; note: string | null }
  alpha: { alpha: number | null; units: number; pairable: number }
  pairwise: { kappa: (number | null)[][]; n: number[][] }
  perAnnotator: Array<{ name: string; meanPairwiseKappa: number | null; kappaVsMajority: number | null; n: number }>
  gold: { items: number; perAnnotator: VersusGold[]; majority: VersusGold | null } | null
  compare: { run: { id: string; name: string } | null; vsMajority: VersusGold | null; vsGold: VersusGold | null }
  runs: Array<{ id: string; name: string }>
}

export async function agreementPage(
  studyId: string,
  runId: string,
  raw: Record<string, string>,
): Promise<AgreementPageData | null> {
  const run = await runOf(studyId, runId)
  if (!run) return null
  const args = AgreementArgs.parse(raw)
  const q = run.schema.questions.find((x) => x.id === (args.question || run.schema.overall))
  if (!q) return null
  const level: AlphaLevel = args.level ?? (q.type === 'ordinal' ? 'ordinal' : 'nominal')
  const num = numericOf(q)
  const [cells, counts, annotators] = await Promise.all([
    labelCells(runId, q.id),
    categoryCounts(runId, q.id),
    annotatorsOf(runId),
  ])
  const rater = new Map(annotators.map((a, i) => [a.key, i]))
  const R = annotators.length
  // Items (by position) with their labels per rater.
  const byItem = new Map<number, { itemId: string; gold: OptionValue | null; row: (OptionValue | null)[] }>()
  for (const c of cells) {
    let it = byItem.get(c.position)
    if (!it) {
      it = { itemId: c.itemId, gold: goldOf(q, c.gold), row: new Array<OptionValue | null>(R).fill(null) }
      byItem.set(c.position, it)
    }
    const r = rater.get(c.annotator)
    if (r !== undefined && c.value !== null) it.row[r] = c.value
  }
  const items = [...byItem.values()]
  const categories = q.options.map((o) => o.value)
  // Fleiss: the items with the full N labels, from the SQL counts per category.
  const perPos = new Map<number, number[]>()
  for (const c of counts) {
    const j = categories.findIndex((v) => v === c.value || String(v) === String(c.value))
    if (j < 0) continue
    const row = perPos.get(c.position) ?? new Array<number>(categories.length).fill(0)
    row[j] = (row[j] ?? 0) + c.n
    perPos.set(c.position, row)
  }
  const full = [...perPos.values()].filter((r) => r.reduce((s, v) => s + v, 0) === run.repetitions)
  let fleiss: AgreementPageData['fleiss'] = { kappa: null, items: full.length, raters: run.repetitions, note: null }
  if (run.repetitions < 2) fleiss.note = 'Fleiss’ κ needs at least two labels per item.'
  else if (!full.length) fleiss.note = 'No item has all its labels yet.'
  else fleiss = { ...fleiss, kappa: fleissKappa(full).fleissKappa }
  const units = items.map((it) => it.row.map(num))
  const alpha = krippendorffAlpha(units, level)
  const table = items.map((it) => it.row)
  const pw = pairwiseKappa(table)
  const per = perRaterAgreement(table)
  const nameOf = (i: number) => {
    const a = annotators[i]
    return args.pseudo ? (a?.pseudonym ?? `Annotator ${i + 1}`) : (a?.name ?? `?`)
  }
  // Against gold (when the dataset has it): each annotator and the items' majority.
  const withGold = items.filter((it) => it.gold !== null)
  let gold: AgreementPageData['gold'] = null
  if (withGold.length) {
    const perAnnotator: VersusGold[] = []
    for (let r = 0; r < R; r++) {
      const g: number[] = []
      const m: number[] = []
      for (const it of withGold) {
        const x = num(it.row[r] ?? null)
        const y = num(it.gold)
        if (x !== null && y !== null) {
          g.push(y)
          m.push(x)
        }
      }
      if (g.length) perAnnotator.push(versus(nameOf(r), g, m, args.resamples, args.seed))
    }
    const g: number[] = []
    const m: number[] = []
    for (const it of withGold) {
      const maj = num(majorityOf(it.row.filter((v): v is OptionValue => v !== null)))
      const y = num(it.gold)
      if (maj !== null && y !== null) {
        g.push(y)
        m.push(maj)
      }
    }
    gold = {
      items: withGold.length,
      perAnnotator,
      majority: g.length ? versus('Majority', g, m, args.resamples, args.seed) : null,
    }
  }
  // Another labelling run over the same dataset (an LLM labeller's run): its label per item (the
  // majority of its labels) against this run's majority and against gold, matched by item id.
  const runs = await db.run.findMany({
    where: { studyId, protocol: 'labelling', datasetId: run.datasetId, id: { not: runId } },
    select: { id: true, name: true },
    orderBy: { createdAt: 'asc' },
  })
  const compare: AgreementPageData['compare'] = { run: null, vsMajority: null, vsGold: null }
  const other = args.compare ? runs.find((r) => r.id === args.compare) : undefined
  if (other) {
    compare.run = other
    const theirs = new Map<string, OptionValue[]>()
    for (const c of await labelCells(other.id, q.id))
      if (c.value !== null) theirs.set(c.itemId, [...(theirs.get(c.itemId) ?? []), c.value])
    const pairs = (target: (it: (typeof items)[number]) => OptionValue | null) => {
      const g: number[] = []
      const m: number[] = []
      for (const it of items) {
        const t = num(target(it))
        const o = num(majorityOf(theirs.get(it.itemId) ?? []))
        if (t !== null && o !== null) {
          g.push(t)
          m.push(o)
        }
      }
      return { g, m }
    }
    const vm = pairs((it) => majorityOf(it.row.filter((v): v is OptionValue => v !== null)))
    const vg = pairs((it) => it.gold)
    compare.vsMajority = vm.g.length ? versus(other.name, vm.g, vm.m, args.resamples, args.seed) : null
    compare.vsGold = vg.g.length ? versus(other.name, vg.g, vg.m, args.resamples, args.seed) : null
  }
  return {
    kind: 'agreement',
    run: { id: run.id, name: run.name, slots: run.repetitions },
    questions: run.schema.questions.map((x) => ({ id: x.id, text: x.text, type: x.type })),
    question: q.id,
    level,
    resamples: args.resamples,
    seed: args.seed,
    pseudo: args.pseudo,
    categories,
    items: items.length,
    labels: cells.length,
    annotators: annotators.map((a, i) => ({
      key: args.pseudo ? a.pseudonym : a.key,
      name: nameOf(i),
      labels: a.labels,
    })),
    fleiss,
    alpha: { alpha: alpha.alpha, units: items.length, pairable: alpha.pairable },
    pairwise: pw,
    perAnnotator: per.map((p) => ({
      name: nameOf(p.rater),
      meanPairwiseKappa: p.meanPairwiseKappa,
      kappaVsMajority: p.kappaVsMajority,
      n: p.n,
    })),
    gold,
    compare,
    runs,
  }
}

/**
 * `views.studyPage`: the service checked read access; the project page is staff only, agreement and
 * adjudication are for whoever adjudicates in the study. null → 404.
 */
export async function labellingStudyPage(
  actor: Actor,
  studyId: string,
  path: string[],
  args: Record<string, string>,
): Promise<{ title: string; data: unknown } | null> {
  if (path.length !== 2) return null
  const runId = segment.safeParse(path[1])
  if (!runId.success) return null
  if (path[0] === 'project') {
    await requireStaff(actor, studyId)
    const parsed = ProjectArgs.safeParse(args)
    if (!parsed.success) throw new AppError(400, parsed.error.issues[0]?.message ?? 'Invalid page parameters.')
    const data = await projectPage(studyId, runId.data, args)
    return data ? { title: `Labelling project: ${data.run.name}`, data } : null
  }
  if (path[0] === 'agreement') {
    await requireAdjudicator(actor, studyId)
    const parsed = AgreementArgs.safeParse(args)
    if (!parsed.success) throw new AppError(400, parsed.error.issues[0]?.message ?? 'Invalid page parameters.')
    const data = await agreementPage(studyId, runId.data, args)
    return data ? { title: `Agreement: ${data.run.name}`, data } : null
  }
  if (path[0] === 'adjudicate') {
    await requireAdjudicator(actor, studyId)
    const { AdjudicateArgs, adjudicationPage } = await import('@/protocols/labelling/server/adjudication')
    const parsed = AdjudicateArgs.safeParse(args)
    if (!parsed.success) throw new AppError(400, parsed.error.issues[0]?.message ?? 'Invalid page parameters.')
    const data = await adjudicationPage(actor, studyId, runId.data, args)
    return data ? { title: `Adjudication: ${data.run.name}`, data } : null
  }
  return null
}

/**
 * `views.studyPanel`: the study's labelling runs, linked to their pages, and the prompt lab (staff only:
 * `staff` false and no runs for anyone else, so no card).
 */
export async function labellingStudyPanel(actor: Actor, studyId: string) {
  const { access } = await requireStudyAccess(db, actor, studyId, 'read')
  const staff = access.includes('write') && hasScope(actor.role, 'exports:read')
  const adjudicator = access.includes('adjudicate')
  if (!staff && !adjudicator) return { staff: false, adjudicator: false, runs: [] }
  const runs = await db.run.findMany({
    where: { studyId, protocol: 'labelling' },
    select: { id: true, name: true, status: true },
    orderBy: { createdAt: 'asc' },
    take: 50,
  })
  // The card shows in a study that labels: it has labelling runs, items to label, or is a labelling study.
  const labels =
    runs.length > 0 ||
    (await db.dataset.count({ where: { studyId, kind: { in: ['labelling-items', 'trec'] } } })) > 0 ||
    (await db.study.count({ where: { id: studyId, protocol: 'labelling' } })) > 0
  return { staff: staff && labels, adjudicator: adjudicator && labels, runs }
}
