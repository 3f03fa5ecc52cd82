import Link from 'next/link'
import { AccuracyChart } from '@/protocols/scorekeeping/ui/accuracy-chart'
import { ClemTable } from '@/protocols/scorekeeping/ui/clem-table'
import type { DashboardProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { ScorekeepingDashboard as Data } from '@/protocols/scorekeeping/server/results'

/**
 * Results of the scorekeeping game across the study: every scorekeeping run side by side (models and
 * people in one table), per experiment, and turn-level accuracy over the probing rounds.
 */
export function ScorekeepingDashboard({ data }: DashboardProps) {
  const d = data as Data
  return (
    <div className="space-y-4">
      <Card
        title="clemscore per player"
        description={`Over ${d.finished} finished episode(s) of ${d.runs.length} run(s) of this study. % Played = episodes not aborted; Quality = mean Main Score of those; clemscore = % Played / 100 × Quality (clemcore's rounding).`}
      >
        <ClemTable rows={d.overall} unit="Game" testId="clem-study" />
      </Card>
      <Card title="Per experiment">
        <ClemTable rows={d.byExperiment} unit="Run" testId="clem-study-experiments" />
      </Card>
      <Card
        title="Accuracy per probing round"
        description="Mean share of side questions answered right, per player and experiment."
      >
        <AccuracyChart curves={d.curves} />
      </Card>
      <Card title="Runs">
        <ul className="text-sm">
          {d.runs.map((r) => (
            <li key={r.id}>
              <Link className="text-brand-700 underline" href={`/runs/${r.id}`}>
                {r.name}
              </Link>{' '}
              <span className="text-stone-500">({r.status})</span>
            </li>
          ))}
        </ul>
      </Card>
    </div>
  )
}
