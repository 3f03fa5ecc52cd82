import { db, type ExportFile, type ExportTable } from '@/lib/server/sdk'
import {
  type LabelItem,
  type LabellingMessage,
  type LabelSchema,
  LabelItem as ItemSchema,
  LabellingConfig,
  LabellingMessage as MessageSchema,
  type QrelLabel,
  type QrelRule,
  qrelsLines,
} from '@/protocols/labelling/core'

/**
 * A labelling run's exports: the labels table (one row per label), the per-turn labels, and TREC qrels
 * files of the query-doc items (core/qrels.ts: the mean of a pair's overall answers, graded by round
 * half up, or binary at >= 1).
 */
interface LabelRow {
  sessionId: string
  position: number
  slot: number
  item: LabelItem | null
  schema: LabelSchema | null
  message: LabellingMessage | null
  authorUserId: string | null
  annotator: string
  createdAt: Date | null
}

const BATCH = 200

/** Every session of the run with its message, by item (position), then slot (repetition); in batches. */
async function* runLabels(runId: string, withItem = true): AsyncGenerator<LabelRow> {
  for (let skip = 0; ; skip += BATCH) {
    const sessions = await db.protocolSession.findMany({
      where: { runId },
      orderBy: [{ position: 'asc' }, { repetition: 'asc' }, { id: 'asc' }],
      skip,
      take: BATCH,
      select: {
        id: true,
        position: true,
        repetition: true,
        config: true,
        seats: true,
        instance: withItem,
        messages: { where: { seq: 1 }, select: { body: true, authorUserId: true, createdAt: true } },
      },
    })
    for (const s of sessions) {
      const m = s.messages[0]
      const message = m ? MessageSchema.safeParse(m.body) : null
      const config = LabellingConfig.safeParse(s.config)
      const item = withItem ? ItemSchema.safeParse(s.instance) : null
      const fill = (s.seats as { annotator?: { kind?: string; model?: { model?: string; connectionId?: string } } })
        ?.annotator
      const annotator = m?.authorUserId
        ? `person:${m.authorUserId}`
        : fill?.kind === 'llm'
          ? `llm:${fill.model?.model ?? fill.model?.connectionId ?? '?'}`
          : (fill?.kind ?? 'unknown')
      yield {
        sessionId: s.id,
        position: s.position,
        slot: s.repetition,
        item: item?.success ? item.data : null,
        schema: config.success ? config.data.schema : null,
        message: message?.success ? message.data : null,
        authorUserId: m?.authorUserId ?? null,
        annotator,
        createdAt: m?.createdAt ?? null,
      }
    }
    if (sessions.length < BATCH) return
  }
}

/** The run's schema (every session has the run's config): the question ids, for the columns. */
async function runSchema(runId: string): Promise<LabelSchema | null> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { config: true } })
  const c = LabellingConfig.safeParse(run?.config)
  return c.success ? c.data.schema : null
}

const itemIdOf = (r: LabelRow) => r.item?.id ?? null

export const labellingExports: Record<string, ExportTable> = {
  labels: {
    label: 'Labels (one row per label: item, annotator, schema version, each answer, rationale, time)',
    description:
      'Every session that ended with a label or an unparseable reply. `annotator` is person:<user id> or llm:<model>; `answer_<question>` is the answer (a mean when an LLM simulated several judges, with `judges` their number).',
    async *rows(runId) {
      const schema = await runSchema(runId)
      const ids = schema?.questions.map((q) => q.id) ?? []
      for await (const r of runLabels(runId)) {
        const m = r.message
        if (!m) continue
        const answers = m.kind === 'label' ? m.answers : {}
        yield {
          item: itemIdOf(r),
          session: r.sessionId,
          slot: r.slot,
          annotator: r.annotator,
          person: r.authorUserId,
          kind: m.kind,
          schemaVersion: m.schemaVersion,
          ...Object.fromEntries(ids.map((id) => [`answer_${id}`, answers[id] ?? null])),
          rationale: m.kind === 'label' ? (m.rationale ?? null) : null,
          reason: m.kind === 'unparseable' ? m.reason : null,
          judges: m.kind === 'label' ? (m.judges?.length ?? 0) : 0,
          elapsedMs: m.kind === 'label' ? (m.elapsedMs ?? null) : null,
          createdAt: r.createdAt?.toISOString() ?? null,
        }
      }
    },
  },
  'turn-labels': {
    label: 'Per-turn labels (one row per transcript turn and question answered)',
    async *rows(runId) {
      for await (const r of runLabels(runId)) {
        const m = r.message
        if (m?.kind !== 'label' || !m.turns) continue
        for (const [turn, answers] of Object.entries(m.turns))
          for (const [question, value] of Object.entries(answers))
            yield {
              item: itemIdOf(r),
              session: r.sessionId,
              annotator: r.annotator,
              turn: Number(turn),
              question,
              value,
            }
      }
    },
  },
}

/** The query-doc labels of a run (overall answers) for qrels. */
async function qrelLabels(runId: string): Promise<QrelLabel[]> {
  const out: QrelLabel[] = []
  for await (const r of runLabels(runId)) {
    const m = r.message
    if (m?.kind !== 'label' || r.item?.kind !== 'query-doc' || !r.schema) continue
    const v = m.answers[r.schema.overall]
    if (typeof v === 'number') out.push({ topicId: r.item.topicId, docId: r.item.docId, value: v })
  }
  return out
}

const qrelsFile = (rule: QrelRule, filename: string, label: string): ExportFile => ({
  label,
  description:
    'TREC qrels (`topic 0 docid rel`) of the query-doc items: the overall answers of a (topic, document) averaged over its labels (an LLM multiple-judges label counts with its mean), then graded by round half up, or binary at ≥ 1.',
  filename,
  contentType: 'text/plain; charset=utf-8',
  async build(runId) {
    const lines = qrelsLines(await qrelLabels(runId), rule)
    return new TextEncoder().encode(lines.length ? `${lines.join('\n')}\n` : '')
  },
})

export const labellingFiles: Record<string, ExportFile> = {
  qrels: qrelsFile({ kind: 'graded' }, 'qrels.txt', 'TREC qrels (graded: mean rounded half up)'),
  'qrels-binary': qrelsFile({ kind: 'binary', threshold: 1 }, 'qrels-binary.txt', 'TREC qrels (binary: mean ≥ 1)'),
}
