import { z } from 'zod'
import { Prisma, db, pageInput, pageOf, skipTake } from '@/lib/server/sdk'
import {
  aggregateRepetitions,
  type IntelligibilityReport,
  type RepetitionCounts,
  reportProportions,
} from '@/protocols/pxp/core/intelligibility'

/**
 * The intelligibility dashboard of a PXP experiment, computed in PostgreSQL. Each session is folded
 * into the constant-size summary of protocols/pxp/core/intelligibility.ts (per agent: non-INIT tags sent,
 * RATIFY/REVISE sent, REVISE sent, first RATIFY/REVISE, first REJECT; the last message number);
 * the counts per repetition and the Fig. 5 bounds are aggregates over those summaries. Only R rows
 * per count reach JavaScript, where the median/min/max over repetitions is the same code the
 * `parley pxp stats` CLI runs, so the dashboard and the CLI agree on the same messages.
 *
 * Sessions count once they have a message (the same sessions an export of M contains).
 */

/** One row per session: the summary of Definitions 1–2 (see protocols/pxp/core/intelligibility.ts). */
const summaries = (runId: string) => Prisma.sql`
  SELECT ps.id, ps.repetition, ps.position, max(m.seq) AS len,
    count(*) FILTER (WHERE m.sender = 'h' AND m.label <> 'INIT') AS h_sent,
    count(*) FILTER (WHERE m.sender = 'h' AND m.label IN ('RATIFY', 'REVISE')) AS h_good,
    count(*) FILTER (WHERE m.sender = 'h' AND m.label = 'REVISE') AS h_rev,
    min(m.seq) FILTER (WHERE m.sender = 'h' AND m.label IN ('RATIFY', 'REVISE')) AS h_fg,
    min(m.seq) FILTER (WHERE m.sender = 'h' AND m.label = 'REJECT') AS h_fr,
    count(*) FILTER (WHERE m.sender = 'm' AND m.label <> 'INIT') AS m_sent,
    count(*) FILTER (WHERE m.sender = 'm' AND m.label IN ('RATIFY', 'REVISE')) AS m_good,
    count(*) FILTER (WHERE m.sender = 'm' AND m.label = 'REVISE') AS m_rev,
    min(m.seq) FILTER (WHERE m.sender = 'm' AND m.label IN ('RATIFY', 'REVISE')) AS m_fg,
    min(m.seq) FILTER (WHERE m.sender = 'm' AND m.label = 'REJECT') AS m_fr
  FROM "ProtocolSession" ps
  JOIN "ProtocolMessage" m ON m."sessionId" = ps.id
  WHERE ps."runId" = ${runId}
  GROUP BY ps.id, ps.repetition, ps.position`

// Definitions 1–2 on a summary row `s` (h_/m_ prefixes).
const ONE_WAY = (a: 'h' | 'm') => Prisma.raw(`(s.${a}_fg IS NOT NULL AND s.${a}_fr IS NULL)`)
const STRONG = (a: 'h' | 'm') => Prisma.raw(`(s.${a}_sent > 0 AND s.${a}_good = s.${a}_sent)`)
const ULTRA = (a: 'h' | 'm') => Prisma.raw(`(s.${a}_sent > 0 AND s.${a}_good = s.${a}_sent AND s.${a}_rev > 0)`)

export const SESSION_CLASSES = {
  'one-way-h': ONE_WAY('h'),
  'one-way-m': ONE_WAY('m'),
  'two-way': Prisma.sql`(${ONE_WAY('h')} AND ${ONE_WAY('m')})`,
  'strong-h': STRONG('h'),
  'strong-m': STRONG('m'),
  'ultra-strong-h': ULTRA('h'),
  'ultra-strong-m': ULTRA('m'),
  'not-intelligible': Prisma.sql`(NOT ${ONE_WAY('h')} AND NOT ${ONE_WAY('m')})`,
} as const
export type SessionClass = keyof typeof SESSION_CLASSES

type N = bigint | number
const num = (v: N | null | undefined) => Number(v ?? 0)

/** The report of `parley pxp stats`, computed in SQL; null when no session has a message yet. */
export async function experimentIntelligibility(runId: string): Promise<IntelligibilityReport | null> {
  const [counts, bounds] = await Promise.all([
    db.$queryRaw<Array<{ repetition: number; sessions: N; oh: N; om: N; tw: N; sh: N; sm: N; uh: N; um: N; len: N }>>`
      WITH s AS (${summaries(runId)})
      SELECT s.repetition, count(*) AS sessions,
        count(*) FILTER (WHERE ${ONE_WAY('h')}) AS oh,
        count(*) FILTER (WHERE ${ONE_WAY('m')}) AS om,
        count(*) FILTER (WHERE ${ONE_WAY('h')} AND ${ONE_WAY('m')}) AS tw,
        count(*) FILTER (WHERE ${STRONG('h')}) AS sh,
        count(*) FILTER (WHERE ${STRONG('m')}) AS sm,
        count(*) FILTER (WHERE ${ULTRA('h')}) AS uh,
        count(*) FILTER (WHERE ${ULTRA('m')}) AS um,
        max(s.len) AS len
      FROM s GROUP BY s.repetition ORDER BY s.repetition`,
    // Fig. 5: oneWay(a) restricted to messages 1..j, for j = 1..L (L = the longest session overall).
    db.$queryRaw<Array<{ repetition: number; j: number; h: N; m: N }>>`
      WITH s AS (${summaries(runId)})
      SELECT s.repetition, g.j,
        count(*) FILTER (WHERE s.h_fg <= g.j AND (s.h_fr IS NULL OR s.h_fr > g.j)) AS h,
        count(*) FILTER (WHERE s.m_fg <= g.j AND (s.m_fr IS NULL OR s.m_fr > g.j)) AS m
      FROM s CROSS JOIN generate_series(1, (SELECT max(len) FROM s)) AS g(j)
      GROUP BY s.repetition, g.j ORDER BY s.repetition, g.j`,
  ])
  if (!counts.length) return null
  const reps: RepetitionCounts[] = counts.map((c) => ({
    sessions: num(c.sessions),
    oneWay: { human: num(c.oh), machine: num(c.om) },
    twoWay: num(c.tw),
    strong: { human: num(c.sh), machine: num(c.sm) },
    ultraStrong: { human: num(c.uh), machine: num(c.um) },
    byBound: bounds
      .filter((b) => b.repetition === c.repetition)
      .map((b) => ({ j: b.j, oneWayHuman: num(b.h), oneWayMachine: num(b.m) })),
  }))
  return aggregateRepetitions(reps)
}

/** The most frequent tag sequences, written as the paper does: INIT_m REFUTE_h REVISE_m … */
export async function tagSequences(runId: string, limit = 15) {
  const rows = await db.$queryRaw<Array<{ sequence: string; sessions: N }>>`
    SELECT t.sequence, count(*) AS sessions FROM (
      SELECT string_agg(m.label || '_' || m.sender, ' ' ORDER BY m.seq) AS sequence
      FROM "ProtocolSession" ps JOIN "ProtocolMessage" m ON m."sessionId" = ps.id
      WHERE ps."runId" = ${runId}
      GROUP BY ps.id
    ) t GROUP BY t.sequence ORDER BY count(*) DESC, t.sequence LIMIT ${limit}`
  return rows.map((r) => ({ sequence: r.sequence, sessions: num(r.sessions) }))
}

/** The dashboard of a run: Fig. 4 and Fig. 5 numbers, tag sequences, and a page of sessions by class. */
export const PxpDashboardArgs = z.object({
  ...pageInput,
  class: z.enum(Object.keys(SESSION_CLASSES) as [SessionClass, ...SessionClass[]]).optional(),
})

export async function pxpDashboard(runId: string, rawArgs: Record<string, string | undefined>) {
  const input = PxpDashboardArgs.parse(rawArgs)
  const filter = input.class ? Prisma.sql`WHERE ${SESSION_CLASSES[input.class]}` : Prisma.empty
  const { skip, take } = skipTake(input.page, input.pageSize)
  const [report, sequences, sessions, totals] = await Promise.all([
    experimentIntelligibility(runId),
    tagSequences(runId),
    db.$queryRaw<
      Array<{
        id: string
        repetition: number
        position: number
        sequence: string
        oh: boolean
        om: boolean
        sh: boolean
        sm: boolean
        uh: boolean
        um: boolean
      }>
    >`
      WITH s AS (${summaries(runId)})
      SELECT s.id, s.repetition, s.position,
        (SELECT string_agg(m.label || '_' || m.sender, ' ' ORDER BY m.seq) FROM "ProtocolMessage" m WHERE m."sessionId" = s.id) AS sequence,
        ${ONE_WAY('h')} AS oh, ${ONE_WAY('m')} AS om, ${STRONG('h')} AS sh, ${STRONG('m')} AS sm,
        ${ULTRA('h')} AS uh, ${ULTRA('m')} AS um
      FROM s ${filter}
      ORDER BY s.repetition, s.position LIMIT ${take} OFFSET ${skip}`,
    db.$queryRaw<Array<{ n: N; open: N }>>`
      WITH s AS (${summaries(runId)})
      SELECT count(*) AS n,
        (SELECT count(*) FROM "ProtocolSession" p WHERE p."runId" = ${runId} AND p.status NOT IN ('done', 'cancelled')) AS open
      FROM s ${filter}`,
  ])
  const total = num(totals[0]?.n)
  return {
    report,
    proportions: report ? reportProportions(report) : null,
    sequences,
    unfinished: num(totals[0]?.open),
    sessions: pageOf(sessions, total, input.page, input.pageSize),
  }
}

/**
 * Two runs side by side: each run's Fig. 4 report and proportions (null when it has no message yet);
 * the page writes B − A beside them.
 */
export async function pxpCompare(runA: string, runB: string) {
  const one = async (id: string) => {
    const report = await experimentIntelligibility(id)
    return { report, proportions: report ? reportProportions(report) : null }
  }
  const [a, b] = await Promise.all([one(runA), one(runB)])
  return { a, b }
}
export type PxpCompare = Awaited<ReturnType<typeof pxpCompare>>
