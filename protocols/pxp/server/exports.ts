import { reportProportions } from '@/protocols/pxp/core/intelligibility'
import type { ExportTable } from '@/lib/server/sdk'
import { experimentIntelligibility } from '@/protocols/pxp/server/dashboard'

/**
 * The intelligibility statistics of a run as a table (the Fig. 4 measures with median, min, max
 * over repetitions and the proportion; the Fig. 5 bounds as `oneWayAtBound` rows by j).
 */
async function* statsRows(runId: string): AsyncGenerator<Record<string, unknown>> {
  const report = await experimentIntelligibility(runId)
  if (!report) return
  const p = reportProportions(report)
  const row = (measure: string, agent: string, s: { median: number; min: number; max: number }, prop: number) => ({
    measure,
    agent,
    j: null as number | null,
    median: s.median,
    min: s.min,
    max: s.max,
    proportion: prop,
  })
  yield row('oneWay', 'human', report.oneWay.human, p.oneWay.human)
  yield row('oneWay', 'machine', report.oneWay.machine, p.oneWay.machine)
  yield row('twoWay', 'both', report.twoWay, p.twoWay)
  yield row('strong', 'human', report.strong.human, p.strong.human)
  yield row('strong', 'machine', report.strong.machine, p.strong.machine)
  yield row('ultraStrong', 'human', report.ultraStrong.human, p.ultraStrong.human)
  yield row('ultraStrong', 'machine', report.ultraStrong.machine, p.ultraStrong.machine)
  for (const [i, b] of report.byBound.entries()) {
    yield { ...row('oneWayAtBound', 'human', b.oneWayHuman, p.byBound[i]?.oneWayHuman ?? 0), j: b.j }
    yield { ...row('oneWayAtBound', 'machine', b.oneWayMachine, p.byBound[i]?.oneWayMachine ?? 0), j: b.j }
  }
}

export const pxpExports: Record<string, ExportTable> = {
  stats: {
    label: 'Statistics (Fig. 4 and 5)',
    description: 'Intelligibility per measure and agent: median, min and max over repetitions, and the proportion.',
    rows: statsRows,
  },
}
