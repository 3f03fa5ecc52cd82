import { z } from 'zod'
import { db } from '@/lib/server/db'
import { notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { reportProportions } from '@/lib/metrics/intelligibility'
import { experimentIntelligibility } from '@/lib/server/services/pxp-dashboard'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/**
 * Exports of an experiment's blackboard (D sessions, M messages, C contexts) and its statistics,
 * as JSON Lines or CSV. Rows are produced by cursor paging (1,000 sessions at a time), so memory
 * stays flat however large the run; the route streams them as they come.
 */

export const EXPORT_TABLES = ['d', 'm', 'c', 'stats'] as const
export type ExportTable = (typeof EXPORT_TABLES)[number]
type Row = Record<string, unknown>

/** What a spreadsheet reads as the start of a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF; objects as JSON. Text
 * that a spreadsheet would run as a formula (starting with =, +, -, @, tab or CR; model output and
 * dataset cells can hold anything) gets a leading single quote, as OWASP recommends. Decided by the
 * value's type: numbers (-0.5 in a numeric column), booleans and dates are written as they are.
 */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s: string
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') s = String(v)
  else if (v instanceof Date) s = v.toISOString()
  else {
    s = typeof v === 'object' ? JSON.stringify(v) : String(v)
    if (FORMULA_START.test(s)) s = `'${s}`
  }
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}
export const csvLine = (values: readonly unknown[]) => values.map(csvField).join(',')

const COLUMNS: Record<ExportTable, string[]> = {
  d: [
    'session',
    'repetition',
    'position',
    'instance',
    'status',
    'stopReason',
    'stallError',
    'assignee',
    'messages',
    'input',
    'prediction',
    'explanation',
    'seats',
    'createdAt',
    'doneAt',
  ],
  m: [
    'repetition',
    'session',
    'position',
    'j',
    'sender',
    'receiver',
    'tag',
    'prediction',
    'explanation',
    'llmCallId',
    'author',
    'createdAt',
  ],
  c: ['repetition', 'session', 'position', 'j', 'context', 'createdAt'],
  stats: ['measure', 'agent', 'j', 'median', 'min', 'max', 'proportion'],
}

async function* sessionPages(experimentId: string) {
  let cursor: string | undefined
  for (;;) {
    const page = await db.protocolSession.findMany({
      where: { experimentId },
      orderBy: { id: 'asc' },
      take: 1000,
      ...(cursor ? { skip: 1, cursor: { id: cursor } } : {}),
      select: {
        id: true,
        repetition: true,
        position: true,
        instanceId: true,
        status: true,
        stopReason: true,
        stallError: true,
        assigneeId: true,
        instance: true,
        seats: true,
        createdAt: true,
        doneAt: true,
        _count: { select: { messages: true } },
      },
    })
    if (!page.length) return
    yield page
    cursor = page.at(-1)?.id
  }
}

async function* rows(experimentId: string, table: ExportTable): AsyncGenerator<Row> {
  if (table === 'stats') {
    const report = await experimentIntelligibility(experimentId)
    if (!report) return
    const p = reportProportions(report)
    const rowsOf = (measure: string, agent: string, s: { median: number; min: number; max: number }, prop: number) => ({
      measure,
      agent,
      j: null,
      ...s,
      proportion: prop,
    })
    yield rowsOf('oneWay', 'human', report.oneWay.human, p.oneWay.human)
    yield rowsOf('oneWay', 'machine', report.oneWay.machine, p.oneWay.machine)
    yield rowsOf('twoWay', 'both', report.twoWay, p.twoWay)
    yield rowsOf('strong', 'human', report.strong.human, p.strong.human)
    yield rowsOf('strong', 'machine', report.strong.machine, p.strong.machine)
    yield rowsOf('ultraStrong', 'human', report.ultraStrong.human, p.ultraStrong.human)
    yield rowsOf('ultraStrong', 'machine', report.ultraStrong.machine, p.ultraStrong.machine)
    for (const [i, b] of report.byBound.entries()) {
      yield { ...rowsOf('oneWayAtBound', 'human', b.oneWayHuman, p.byBound[i]?.oneWayHuman ?? 0), j: b.j }
      yield { ...rowsOf('oneWayAtBound', 'machine', b.oneWayMachine, p.byBound[i]?.oneWayMachine ?? 0), j: b.j }
    }
    return
  }
  for await (const page of sessionPages(experimentId)) {
    if (table === 'd') {
      for (const s of page) {
        const inst = (s.instance ?? {}) as { input?: unknown; prediction?: string; explanation?: string }
        yield {
          session: s.id,
          repetition: s.repetition,
          position: s.position,
          instance: s.instanceId,
          status: s.status,
          stopReason: s.stopReason,
          stallError: s.stallError,
          assignee: s.assigneeId,
          messages: s._count.messages,
          input: inst.input ?? null,
          prediction: inst.prediction ?? null,
          explanation: inst.explanation ?? null,
          seats: s.seats,
          createdAt: s.createdAt,
          doneAt: s.doneAt,
        }
      }
      continue
    }
    const bySession = new Map(page.map((s) => [s.id, s]))
    if (table === 'm') {
      const messages = await db.protocolMessage.findMany({
        where: { sessionId: { in: page.map((s) => s.id) } },
        orderBy: [{ sessionId: 'asc' }, { seq: 'asc' }],
      })
      for (const m of messages) {
        const s = bySession.get(m.sessionId)
        yield {
          repetition: s?.repetition,
          session: m.sessionId,
          position: s?.position,
          j: m.seq,
          sender: m.sender,
          receiver: m.receiver,
          tag: m.tag,
          prediction: m.prediction,
          explanation: m.explanation,
          llmCallId: m.llmCallId,
          author: m.authorUserId,
          createdAt: m.createdAt,
        }
      }
    } else {
      const contexts = await db.contextSnapshot.findMany({
        where: { sessionId: { in: page.map((s) => s.id) } },
        orderBy: [{ sessionId: 'asc' }, { seq: 'asc' }],
      })
      for (const c of contexts) {
        const s = bySession.get(c.sessionId)
        yield {
          repetition: s?.repetition,
          session: c.sessionId,
          position: s?.position,
          j: c.seq,
          context: c.context,
          createdAt: c.createdAt,
        }
      }
    }
  }
}

/** The export as lines of text (a header first for CSV), ready to stream. */
export async function* exportLines(experimentId: string, table: ExportTable, format: 'jsonl' | 'csv') {
  const cols = COLUMNS[table]
  if (format === 'csv') yield csvLine(cols)
  for await (const row of rows(experimentId, table)) {
    yield format === 'csv' ? csvLine(cols.map((c) => row[c])) : JSON.stringify(row)
  }
}

export const exportExperiment = defineOperation({
  name: 'experiments.export',
  scope: 'exports:read',
  input: z.object({
    experimentId: id,
    table: z.enum(EXPORT_TABLES, { error: 'Choose d, m, c or stats.' }).default('m'),
    format: z.enum(['jsonl', 'csv'], { error: 'Choose jsonl or csv.' }).default('jsonl'),
  }),
  async run(actor, { experimentId, table, format }) {
    const e = await db.experiment.findUnique({ where: { id: experimentId } })
    if (!e) throw notFound('Experiment')
    // Exporting a study's data is researcher work: viewers read the dashboards, they do not export.
    await requireStudyAccess(db, actor, e.studyId, 'write')
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'experiment.export',
      resourceType: 'experiment',
      resourceId: e.id,
      studyId: e.studyId,
      after: { table, format },
    })
    const slug = e.name.replace(/[^\w.-]+/g, '-').slice(0, 60) || 'experiment'
    return {
      filename: `${slug}-${table}.${format}`,
      contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      lines: () => exportLines(e.id, table, format),
    }
  },
})
