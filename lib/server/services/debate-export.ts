import { z } from 'zod'
import { entropy } from '@/lib/metrics/evince'
import { db } from '@/lib/server/db'
import { notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/services/audit'
import { replayDebate, roundPoints } from '@/lib/server/services/debates'
import { csvLine } from '@/lib/server/services/pxp-export'
import { id, requireStudyAccess } from '@/lib/server/services/studies'

/**
 * Exports of a debate run, computed by replaying each session's log (the same derivation as the
 * pages): `rounds` (one row per case and round: both distributions, every metric, CRIT, Δ) and
 * `finals` (one row per case: truth, stop reason, P_f, its entropy, EnToPPS, the report).
 * Sessions are read 200 at a time.
 */
export const DEBATE_EXPORT_TABLES = ['rounds', 'finals'] as const
type Table = (typeof DEBATE_EXPORT_TABLES)[number]

const COLUMNS: Record<Table, string[]> = {
  rounds: [
    'session',
    'position',
    'round',
    'delta',
    'A',
    'B',
    'labels',
    'entropyA',
    'entropyB',
    'klAB',
    'klBA',
    'crossEntropyAB',
    'crossEntropyBA',
    'jsd',
    'wd',
    'mi',
    'nmi',
    'critA',
    'critB',
    'warnings',
  ],
  finals: [
    'session',
    'position',
    'symptoms',
    'truth',
    'status',
    'stopReason',
    'rounds',
    'final',
    'finalEntropy',
    'entopps',
    'conclusion',
    'missingInformation',
    'labTests',
  ],
}

async function* rows(experimentId: string, table: Table): AsyncGenerator<Record<string, unknown>> {
  let cursor: string | undefined
  for (;;) {
    const page = await db.protocolSession.findMany({
      where: { experimentId },
      orderBy: { id: 'asc' },
      take: 200,
      ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      select: {
        id: true,
        position: true,
        status: true,
        stopReason: true,
        config: true,
        instance: true,
        messages: { orderBy: { seq: 'asc' }, select: { seq: true, payload: true } },
      },
    })
    if (!page.length) return
    cursor = page.at(-1)?.id
    for (const s of page) {
      const { instance, state, final } = replayDebate(s)
      if (table === 'rounds') {
        for (const p of roundPoints(state.rounds)) {
          const r = state.rounds.find((x) => x.round === p.round)
          const { round, delta, crit: _mean, critA, critB, ...metrics } = p
          yield {
            session: s.id,
            position: s.position,
            round,
            delta,
            A: r?.A?.predictions.map(({ label, probability }) => ({ label, probability })),
            B: r?.B?.predictions.map(({ label, probability }) => ({ label, probability })),
            labels: r?.metrics?.labels,
            ...metrics,
            critA,
            critB,
            warnings: r?.metrics?.warnings,
          }
        }
      } else {
        yield {
          session: s.id,
          position: s.position,
          symptoms: instance.input.symptoms,
          truth: instance.prediction,
          status: s.status,
          stopReason: s.stopReason,
          rounds: state.rounds.filter((r) => r.metrics).length,
          final: s.status === 'done' ? (final?.crit ?? null) : null,
          finalEntropy: s.status === 'done' && final ? entropy(final.crit.map((p) => p.probability)) : null,
          entopps: s.status === 'done' ? (final?.entopps ?? null) : null,
          conclusion: state.report?.conclusion ?? null,
          missingInformation: state.report?.missingInformation ?? null,
          labTests: state.report?.labTests ?? null,
        }
      }
    }
  }
}

export async function* debateExportLines(experimentId: string, table: Table, format: 'jsonl' | 'csv') {
  const cols = COLUMNS[table]
  if (format === 'csv') yield csvLine(cols)
  for await (const row of rows(experimentId, table))
    yield format === 'csv'
      ? csvLine(cols.map((c) => (row[c] !== null && typeof row[c] === 'object' ? JSON.stringify(row[c]) : row[c])))
      : JSON.stringify(row)
}

export const exportDebates = defineOperation({
  name: 'debates.export',
  scope: 'exports:read',
  input: z.object({
    experimentId: id,
    table: z.enum(DEBATE_EXPORT_TABLES, { error: 'Choose rounds or finals.' }).default('rounds'),
    format: z.enum(['jsonl', 'csv'], { error: 'Choose jsonl or csv.' }).default('jsonl'),
  }),
  async run(actor, { experimentId, table, format }) {
    const e = await db.experiment.findFirst({ where: { id: experimentId, protocol: 'evince' } })
    if (!e) throw notFound('Debate')
    // Exporting a study's data is researcher work: viewers read the results, they do not export.
    await requireStudyAccess(db, actor, e.studyId, 'write')
    await writeAudit(db, {
      actor: actorRef(actor),
      action: 'debate.export',
      resourceType: 'experiment',
      resourceId: e.id,
      studyId: e.studyId,
      after: { table, format },
    })
    const slug = e.name.replace(/[^\w.-]+/g, '-').slice(0, 60) || 'debate'
    return {
      filename: `${slug}-${table}.${format}`,
      contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      lines: () => debateExportLines(e.id, table, format),
    }
  },
})
