import { z } from 'zod'
import {
  type Actor,
  actorRef,
  badRequest,
  db,
  defineOperation,
  type ExportTable,
  hasScope,
  id,
  notFound,
  requireStudyAccess,
  writeAudit,
} from '@/lib/server/sdk'
import { LabellingConfig, type LabelSchema, type OptionValue, OptionValue as Value } from '@/protocols/labelling/core'
import { majorityOf } from '@/protocols/labelling/core/majority'

/**
 * Adjudication of a labelling run (issue 25): the items where the annotators disagree (or disagree
 * with gold, or with another labelling run over the same dataset), side by side; an adjudicator sets
 * the item's final label with a note. Who: the `labels:adjudicate` scope AND the study permission
 * `adjudicate` (a study admin, researcher or adjudicator: lib/server/auth/study-roles.ts), so an
 * annotator, who never sees another's label, never adjudicates unless the study makes them its
 * adjudicator (and then labels nothing in it: an adjudicator does not take part). Final labels are the plugin's own
 * table (LabelAdjudication), one row per (run, item, question); every change is audited.
 */

async function labellingRun(runId: string) {
  const run = await db.run.findUnique({
    where: { id: runId },
    select: { id: true, studyId: true, protocol: true, name: true, datasetId: true, repetitions: true, config: true },
  })
  if (run?.protocol !== 'labelling') throw notFound('Labelling run')
  const c = LabellingConfig.safeParse(run.config)
  if (!c.success) throw notFound('Labelling run')
  return { ...run, schema: c.data.schema, labeller: c.data.labeller }
}

export const AdjudicateInput = z.object({
  runId: id,
  position: z.coerce.number().int().min(0).max(10_000_000),
  question: z.string().trim().max(32).optional(),
  value: Value,
  note: z.string().trim().min(1, 'Say why: a note is required.').max(4000, 'A note is at most 4,000 characters.'),
})

/** Set (or change) an item's final label. */
export const adjudicateLabel = defineOperation({
  name: 'labelling.adjudicate',
  scope: 'labels:adjudicate',
  input: AdjudicateInput,
  async run(actor, input) {
    const run = await labellingRun(input.runId)
    await requireStudyAccess(db, actor, run.studyId, 'adjudicate')
    const q = run.schema.questions.find((x) => x.id === (input.question || run.schema.overall))
    if (!q) throw badRequest(`The schema asks no question ${input.question}.`, { question: ['Unknown question.'] })
    const value = q.options.find((o) => o.value === input.value || String(o.value) === String(input.value))?.value
    if (value === undefined)
      throw badRequest(`${input.value} is not an option of ${q.id}.`, {
        value: [`Choose one of ${q.options.map((o) => o.value).join(', ')}.`],
      })
    const session = await db.protocolSession.findFirst({
      where: { runId: run.id, position: input.position },
      select: { instance: true },
    })
    if (!session) throw notFound('Item')
    const itemId = String((session.instance as { id?: unknown } | null)?.id ?? input.position)
    const key = { runId_position_question: { runId: run.id, position: input.position, question: q.id } }
    const before = await db.labelAdjudication.findUnique({ where: key })
    const saved = await db.labelAdjudication.upsert({
      where: key,
      create: {
        runId: run.id,
        position: input.position,
        itemId,
        question: q.id,
        value,
        note: input.note,
        adjudicatorId: actor.userId,
      },
      update: { value, note: input.note, adjudicatorId: actor.userId },
    })
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'labelling.adjudicate',
      resourceType: 'run',
      resourceId: run.id,
      studyId: run.studyId,
      before: before
        ? { position: before.position, question: before.question, value: before.value, note: before.note }
        : null,
      after: { position: saved.position, itemId, question: q.id, value, note: saved.note },
    })
    return { id: saved.id, runId: run.id, position: saved.position, itemId, question: q.id, value, note: saved.note }
  },
})

// ───────────────────────────── the adjudication page ─────────────────────────────

export const AdjudicateArgs = z.object({
  question: z.string().trim().max(32).optional(),
  against: z.enum(['annotators', 'gold', 'compare']).default('annotators'),
  compare: z.string().trim().max(100).optional(),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  pseudo: z
    .enum(['1', '0', 'true', 'false', 'on', ''])
    .optional()
    .transform((v) => v === '1' || v === 'true' || v === 'on'),
})

interface LabelOfItem {
  annotator: string
  value: OptionValue | null
  rationale: string | null
}

export interface AdjudicationPageData {
  kind: 'adjudicate'
  run: { id: string; name: string; slots: number }
  question: string
  questions: Array<{ id: string; text: string }>
  options: Array<{ value: OptionValue; label: string }>
  against: 'annotators' | 'gold' | 'compare'
  compare: { id: string; name: string } | null
  runs: Array<{ id: string; name: string }>
  pseudo: boolean
  canAdjudicate: boolean
  total: number
  page: number
  pageSize: number
  items: Array<{
    position: number
    itemId: string
    labels: LabelOfItem[]
    gold: OptionValue | null
    other: OptionValue[]
    majority: OptionValue | null
    final: { value: unknown; note: string; adjudicator: string | null; at: string } | null
  }>
}

const ANNOTATOR = `coalesce(m."authorUserId", 'llm:' || coalesce(ps.seats->'annotator'->'model'->>'model', ps.seats->'annotator'->'model'->>'connectionId', '?'))`

/** Every label of a run for one question, with rationale and gold: one SQL query. */
async function labelsOf(runId: string, question: string) {
  return db.$queryRawUnsafe<
    Array<{
      position: number
      itemId: string
      annotator: string
      name: string | null
      value: OptionValue | null
      rationale: string | null
      gold: string | null
      first: Date
    }>
  >(
    `SELECT ps.position, coalesce(ps.instance->>'id', ps.position::text) AS "itemId", ${ANNOTATOR} AS annotator,
            u.name, m.body->'answers'->$2 AS value, m.body->>'rationale' AS rationale, i.prediction AS gold,
            min(m."createdAt") OVER (PARTITION BY ${ANNOTATOR}) AS first
     FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
     LEFT JOIN "Instance" i ON i.id = ps."instanceId"
     LEFT JOIN "user" u ON u.id = m."authorUserId"
     WHERE ps."runId" = $1 AND m.body->>'kind' = 'label'
     ORDER BY ps.position, ps.repetition`,
    runId,
    question,
  )
}

function goldValue(schema: LabelSchema, question: string, raw: string | null): OptionValue | null {
  const q = schema.questions.find((x) => x.id === question)
  if (!q || raw === null || raw.trim() === '') return null
  let v: unknown = raw
  try {
    v = JSON.parse(raw)
  } catch {}
  if (typeof v === 'object' && v !== null && question in v) v = (v as Record<string, unknown>)[question]
  return q.options.find((o) => o.value === v || String(o.value) === String(v))?.value ?? null
}

/** Stable names: "Annotator i" by first label (then key), or the person's name / the LLM's model. */
function namer(rows: Array<{ annotator: string; name: string | null; first: Date }>, pseudo: boolean) {
  const firsts = new Map<string, { first: number; name: string | null }>()
  for (const r of rows) firsts.set(r.annotator, { first: r.first.getTime(), name: r.name })
  const order = [...firsts].sort((x, y) => x[1].first - y[1].first || x[0].localeCompare(y[0])).map(([k]) => k)
  return (key: string) =>
    pseudo
      ? `Annotator ${order.indexOf(key) + 1}`
      : key.startsWith('llm:')
        ? key.slice(4)
        : (firsts.get(key)?.name ?? key)
}

export async function adjudicationPage(
  actor: Actor,
  studyId: string,
  runId: string,
  raw: Record<string, string>,
): Promise<AdjudicationPageData | null> {
  const args = AdjudicateArgs.parse(raw)
  const { access } = await requireStudyAccess(db, actor, studyId, 'adjudicate')
  const run = await db.run.findUnique({ where: { id: runId }, select: { studyId: true, protocol: true } })
  if (!run || run.studyId !== studyId || run.protocol !== 'labelling') return null
  const r = await labellingRun(runId)
  const q = r.schema.questions.find((x) => x.id === (args.question || r.schema.overall))
  if (!q) return null
  const rows = await labelsOf(runId, q.id)
  const name = namer(rows, args.pseudo)
  const runs = await db.run.findMany({
    where: { studyId, protocol: 'labelling', datasetId: r.datasetId, id: { not: runId } },
    select: { id: true, name: true },
    orderBy: { createdAt: 'asc' },
  })
  const other = args.compare ? (runs.find((x) => x.id === args.compare) ?? null) : null
  const theirs = new Map<string, OptionValue[]>()
  if (other)
    for (const o of await labelsOf(other.id, q.id))
      if (o.value !== null) theirs.set(o.itemId, [...(theirs.get(o.itemId) ?? []), o.value])
  const byItem = new Map<number, AdjudicationPageData['items'][number]>()
  for (const x of rows) {
    let it = byItem.get(x.position)
    if (!it) {
      it = {
        position: x.position,
        itemId: x.itemId,
        labels: [],
        gold: goldValue(r.schema, q.id, x.gold),
        other: theirs.get(x.itemId) ?? [],
        majority: null,
        final: null,
      }
      byItem.set(x.position, it)
    }
    it.labels.push({ annotator: name(x.annotator), value: x.value, rationale: x.rationale })
  }
  const same = (u: unknown, v: unknown) => u === v || String(u) === String(v)
  const all = [...byItem.values()]
  for (const it of all) it.majority = majorityOf(it.labels.flatMap((l) => (l.value === null ? [] : [l.value])))
  const disputed = all.filter((it) => {
    const vals = it.labels.map((l) => l.value)
    if (args.against === 'gold') return it.gold !== null && vals.some((v) => !same(v, it.gold))
    if (args.against === 'compare')
      return it.other.length > 0 && !same(majorityOf(it.other), it.majority ?? '\u0000no majority')
    return new Set(vals.map((v) => JSON.stringify(v))).size > 1
  })
  const page = disputed.slice((args.page - 1) * args.pageSize, args.page * args.pageSize)
  const finals = await db.labelAdjudication.findMany({
    where: { runId, question: q.id, position: { in: page.map((p) => p.position) } },
  })
  const adjudicators = await db.user.findMany({
    where: { id: { in: finals.flatMap((f) => (f.adjudicatorId ? [f.adjudicatorId] : [])) } },
    select: { id: true, name: true },
  })
  for (const it of page) {
    const f = finals.find((x) => x.position === it.position)
    if (f)
      it.final = {
        value: f.value,
        note: f.note,
        adjudicator: adjudicators.find((u) => u.id === f.adjudicatorId)?.name ?? null,
        at: f.updatedAt.toISOString(),
      }
    if (args.against !== 'gold') it.gold = args.against === 'compare' ? it.gold : null
  }
  return {
    kind: 'adjudicate',
    run: { id: r.id, name: r.name, slots: r.repetitions },
    question: q.id,
    questions: r.schema.questions.map((x) => ({ id: x.id, text: x.text })),
    options: q.options.map((o) => ({ value: o.value, label: o.label })),
    against: args.against,
    compare: other,
    runs,
    pseudo: args.pseudo,
    canAdjudicate: hasScope(actor.role, 'labels:adjudicate') && access.includes('adjudicate'),
    total: disputed.length,
    page: args.page,
    pageSize: args.pageSize,
    items: page,
  }
}

// ───────────────────────────── exports ─────────────────────────────

/**
 * `final-labels`: one row per item and question: the adjudicated label, else the majority (unanimous or
 * a strict majority), else empty with the reason. `annotations`: every label with its annotator id,
 * name and stable pseudonym, schema version, model and prompt variant for an LLM label, timestamps
 * (export it as JSONL; pick the name or the pseudonym column to share).
 */
export const finalLabelExports: Record<string, ExportTable> = {
  'final-labels': {
    label: 'Final labels (one row per item: adjudicated, else the majority, else empty with a reason)',
    async *rows(runId) {
      const r = await labellingRun(runId)
      for (const q of r.schema.questions) {
        const labels = await labelsOf(runId, q.id)
        const finals = new Map(
          (await db.labelAdjudication.findMany({ where: { runId, question: q.id } })).map((f) => [f.position, f]),
        )
        const positions = await db.protocolSession.findMany({
          where: { runId },
          distinct: ['position'],
          orderBy: { position: 'asc' },
          select: { position: true, instance: true },
        })
        for (const p of positions) {
          const vals = labels
            .filter((l) => l.position === p.position && l.value !== null)
            .map((l) => l.value as OptionValue)
          const f = finals.get(p.position)
          const maj = majorityOf(vals)
          const unanimous = vals.length > 0 && vals.every((v) => v === vals[0])
          yield {
            item: String((p.instance as { id?: unknown } | null)?.id ?? p.position),
            position: p.position,
            question: q.id,
            final: f ? (f.value as OptionValue) : maj,
            source: f ? 'adjudicated' : maj !== null ? (unanimous ? 'unanimous' : 'majority') : '',
            reason: f || maj !== null ? '' : vals.length ? 'tie: no majority' : 'no labels yet',
            labels: vals.length,
            note: f?.note ?? '',
            adjudicator: f?.adjudicatorId ?? null,
          }
        }
      }
    },
  },
  annotations: {
    label: 'Annotations (every label: annotator id, name and pseudonym, schema version, model and prompt variant)',
    async *rows(runId) {
      const r = await labellingRun(runId)
      const rows = await db.$queryRawUnsafe<
        Array<{
          sessionId: string
          position: number
          slot: number
          itemId: string
          annotator: string
          name: string | null
          body: Record<string, unknown>
          seats: { annotator?: { kind?: string; model?: { model?: string } } } | null
          config: unknown
          createdAt: Date
          first: Date
        }>
      >(
        `SELECT ps.id AS "sessionId", ps.position, ps.repetition AS slot,
                coalesce(ps.instance->>'id', ps.position::text) AS "itemId", ${ANNOTATOR} AS annotator, u.name,
                m.body, ps.seats, ps.config, m."createdAt",
                min(m."createdAt") OVER (PARTITION BY ${ANNOTATOR}) AS first
         FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id AND m.seq = 1
         LEFT JOIN "user" u ON u.id = m."authorUserId"
         WHERE ps."runId" = $1 ORDER BY ps.position, ps.repetition`,
        runId,
      )
      const named = namer(rows, false)
      const pseudo = namer(rows, true)
      for (const x of rows) {
        const llm = x.seats?.annotator?.kind === 'llm'
        const c = LabellingConfig.safeParse(x.config)
        yield {
          item: x.itemId,
          position: x.position,
          slot: x.slot,
          session: x.sessionId,
          annotatorId: x.annotator,
          annotatorName: named(x.annotator),
          pseudonym: pseudo(x.annotator),
          kind: x.body.kind ?? null,
          schemaVersion: x.body.schemaVersion ?? r.schema.version,
          answers: x.body.answers ?? null,
          rationale: x.body.rationale ?? null,
          elapsedMs: x.body.elapsedMs ?? null,
          model: llm ? (x.seats?.annotator?.model?.model ?? null) : null,
          promptVariant: llm && c.success ? c.data.labeller.variant : null,
          createdAt: x.createdAt.toISOString(),
        }
      }
    },
  },
}
