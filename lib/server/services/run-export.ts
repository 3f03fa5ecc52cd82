import { z } from 'zod'
import { db } from '@/lib/server/db'
import { badRequest } from '@/lib/server/errors'
import { pluginFor } from '@/lib/server/engine/plugins'
import { PROJECTIONS, type ProjectionName } from '@/lib/server/engine/plugin'
import { defineOperation, validationFailure } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { csvLine } from '@/lib/server/services/csv'
import { sourceIdOf } from '@/lib/tasks/datasets'
import { findRun } from '@/lib/server/services/runs'
import { id } from '@/lib/server/services/studies'

/**
 * Exports of a run, for every protocol: the blackboard D (sessions), M (messages, read from their
 * canonical `body`) and C (contexts), plus the protocol's own tables, as JSON Lines or CSV. Rows are
 * produced by cursor paging (1,000 sessions at a time), so memory stays flat however large the run.
 * In CSV, a nested value (a message body, an instance, a context) is one cell of JSON text.
 */
type Row = Record<string, unknown>

const GENERIC: Record<'d' | 'm' | 'c', string[]> = {
  d: [
    'session',
    'repetition',
    'position',
    'instance',
    'sourceRow',
    'sourceId',
    'status',
    'stopReason',
    'stallError',
    'people',
    'messages',
    'input',
    'prediction',
    'explanation',
    'snapshot',
    'seats',
    'createdAt',
    'doneAt',
    'parent',
    'forkSeq',
  ],
  m: [
    'repetition',
    'session',
    'position',
    'j',
    'sender',
    'receiver',
    'label',
    'value',
    'detail',
    'body',
    'meta',
    'llmCallId',
    'author',
    'createdAt',
  ],
  c: ['repetition', 'session', 'position', 'j', 'context', 'createdAt'],
}

async function* sessionPages(runId: string) {
  let cursor: string | undefined
  for (;;) {
    const page = await db.protocolSession.findMany({
      where: { runId: runId },
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
        instance: true,
        seats: true,
        createdAt: true,
        doneAt: true,
        parentId: true,
        forkSeq: true,
        people: { select: { seat: true, userId: true } },
        _count: { select: { messages: true } },
      },
    })
    if (!page.length) return
    yield page
    cursor = page.at(-1)?.id
  }
}

/** What the run's protocol calls the message projections (its M export's column names). */
type Names = Partial<Record<ProjectionName, string>>

/** A generic table's columns, M's projections under the protocol's names. */
function columnsOf(table: 'd' | 'm' | 'c', names: Names) {
  return GENERIC[table].map((c) =>
    (PROJECTIONS as readonly string[]).includes(c) ? (names[c as ProjectionName] ?? c) : c,
  )
}

async function* genericRows(runId: string, table: 'd' | 'm' | 'c', names: Names): AsyncGenerator<Row> {
  for await (const page of sessionPages(runId)) {
    if (table === 'd') {
      // Where each instance came from in its source file, so the export joins back to it.
      const ids = page.flatMap((s) => (s.instanceId ? [s.instanceId] : []))
      const source = new Map(
        (await db.instance.findMany({ where: { id: { in: ids } }, select: { id: true, index: true, meta: true } })).map(
          (i) => [i.id, { row: i.index + 1, id: sourceIdOf(i.meta) }],
        ),
      )
      for (const s of page) {
        const inst = (s.instance ?? {}) as { input?: unknown; prediction?: unknown; explanation?: unknown }
        yield {
          session: s.id,
          repetition: s.repetition,
          position: s.position,
          instance: s.instanceId,
          sourceRow: s.instanceId ? (source.get(s.instanceId)?.row ?? null) : null,
          sourceId: s.instanceId ? (source.get(s.instanceId)?.id ?? null) : null,
          status: s.status,
          stopReason: s.stopReason,
          stallError: s.stallError,
          people: Object.fromEntries(s.people.map((p) => [p.seat, p.userId])),
          messages: s._count.messages,
          input: inst.input ?? null,
          prediction: typeof inst.prediction === 'string' ? inst.prediction : null,
          explanation: typeof inst.explanation === 'string' ? inst.explanation : null,
          snapshot: s.instance,
          seats: s.seats,
          createdAt: s.createdAt,
          doneAt: s.doneAt,
          // A fork (a branch of an episode, a scheduler's fork): the session it came from and how many
          // of its messages it starts with; empty for the run's own sessions.
          parent: s.parentId,
          forkSeq: s.forkSeq,
        }
      }
      continue
    }
    const bySession = new Map(page.map((s) => [s.id, s]))
    const ids = page.map((s) => s.id)
    if (table === 'm') {
      const messages = await db.protocolMessage.findMany({
        where: { sessionId: { in: ids } },
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
          [names.label ?? 'label']: m.label,
          [names.value ?? 'value']: m.value,
          [names.detail ?? 'detail']: m.detail,
          body: m.body,
          meta: m.payload,
          llmCallId: m.llmCallId,
          author: m.authorUserId,
          createdAt: m.createdAt,
        }
      }
    } else {
      const contexts = await db.contextSnapshot.findMany({
        where: { sessionId: { in: ids } },
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

/** A table as lines (CSV: the header first; columns are the first row's keys for protocol tables). */
export async function* tableLines(rows: AsyncIterable<Row>, format: 'jsonl' | 'csv', columns?: string[]) {
  let cols = columns
  if (format === 'csv' && cols) yield csvLine(cols)
  for await (const row of rows) {
    if (format === 'jsonl') {
      yield JSON.stringify(row)
      continue
    }
    if (!cols) {
      cols = Object.keys(row)
      yield csvLine(cols)
    }
    yield csvLine(cols.map((c) => row[c]))
  }
}

/** The lines of a generic table of a run (the CLI's `parley pxp export` reads M as JSONL). */
export async function* runTableLines(runId: string, table: 'd' | 'm' | 'c', format: 'jsonl' | 'csv') {
  const run = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { protocol: true } })
  const names = (await pluginFor(run.protocol)).projectionNames ?? {}
  yield* tableLines(genericRows(runId, table, names), format, columnsOf(table, names))
}

export const exportRun = defineOperation({
  name: 'runs.export',
  scope: 'exports:read',
  input: z.object({
    runId: id,
    table: z.string().trim().min(1).max(40).default('m'),
    format: z.enum(['jsonl', 'csv'], { error: 'Choose jsonl or csv.' }).default('jsonl'),
    /** A protocol table's own parameters (the export URL's other query values), checked by its `args`. */
    args: z
      .record(z.string().max(40), z.string().max(200))
      .refine((a) => Object.keys(a).length <= 20, 'At most 20 parameters.')
      .default({}),
  }),
  async run(actor, { runId, table, format, args }) {
    // Exporting a study's data is researcher work: viewers read the results, they do not export.
    const e = await findRun(actor, runId, 'write')
    const plugin = await pluginFor(e.protocol)
    const tables = (await plugin.exports?.())?.tables ?? {}
    const names = plugin.projectionNames ?? {}
    const custom = tables[table]
    if (!custom && !(table in GENERIC)) {
      const names = ['d', 'm', 'c', ...Object.keys(tables)]
      throw badRequest(`Unknown table "${table}". Choose ${names.join(', ')}.`, {
        table: [`Choose ${names.join(', ')}.`],
      })
    }
    let parsed: Record<string, unknown> | undefined
    if (custom?.args) {
      const r = custom.args.safeParse(args)
      if (!r.success) {
        const f = validationFailure(r.error)
        throw badRequest(f.error, f.fieldErrors)
      }
      parsed = r.data
    }
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'run.export',
      resourceType: 'run',
      resourceId: e.id,
      studyId: e.studyId,
      after: parsed ? { table, format, args: parsed } : { table, format },
    })
    const slug = e.name.replace(/[^\w.-]+/g, '-').slice(0, 60) || 'run'
    return {
      filename: `${slug}-${table}.${format}`,
      contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      lines: () =>
        custom
          ? tableLines(custom.rows(e.id, format, parsed), format)
          : tableLines(
              genericRows(e.id, table as 'd' | 'm' | 'c', names),
              format,
              columnsOf(table as 'd' | 'm' | 'c', names),
            ),
    }
  },
})

/** A file of a run (a zip of clembench's folder layout …), as bytes. */
export const exportRunFile = defineOperation({
  name: 'runs.export-file',
  scope: 'exports:read',
  input: z.object({ runId: id, file: z.string().trim().min(1).max(40) }),
  async run(actor, { runId, file }) {
    // Exporting a study's data is researcher work: viewers read the results, they do not export.
    const e = await findRun(actor, runId, 'write')
    const f = (await (await pluginFor(e.protocol)).exports?.())?.files?.[file]
    if (!f) throw badRequest(`This run has no file "${file}".`)
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'run.export',
      resourceType: 'run',
      resourceId: e.id,
      studyId: e.studyId,
      after: { file },
    })
    return { filename: f.filename, contentType: f.contentType, bytes: await f.build(e.id) }
  },
})
