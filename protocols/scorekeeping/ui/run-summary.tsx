import Link from 'next/link'
import { ClemTable } from '@/protocols/scorekeeping/ui/clem-table'
import type { RunSummaryProps } from '@/components/protocols/types'
import { StatusBadge } from '@/components/runs/status'
import { Card } from '@/components/ui/card'
import { Pagination, Table, Td } from '@/components/ui/table'
import type { ScorekeepingRunView } from '@/protocols/scorekeeping/server/results'

const n3 = (x: number | null) => (x === null ? '—' : Number.isInteger(x) ? String(x) : x.toFixed(3))

/** The game part of the run page: clembench's numbers of the run and every episode with its scores. */
export function ScorekeepingRunSummary({ run, data, params, basePath }: RunSummaryProps) {
  const d = data as ScorekeepingRunView | null
  if (!d) return null
  return (
    <div className="space-y-4">
      <Card title={`clemscore of this run (${d.finished} finished episode${d.finished === 1 ? '' : 's'})`}>
        <ClemTable rows={d.overall} unit="Game" testId="clem-overall" />
        <details className="mt-3">
          <summary className="cursor-pointer text-sm text-stone-600">Per experiment</summary>
          <ClemTable rows={d.byExperiment} unit="Run" testId="clem-experiments" />
        </details>
      </Card>
      <Card title="Episodes">
        <Table
          caption="Episodes of the run with clembench's episode scores"
          head={[
            'Episode',
            'Player',
            'Status',
            'Main Score',
            'Accuracy',
            'Kappa',
            'Slot filling',
            'Middle acc.',
            'Requests',
          ]}
        >
          {d.episodes.items.map((e) => (
            <tr key={e.sessionId} data-testid="episode-row" data-main-score={e.mainScore ?? ''}>
              <Td>
                {run.can.openSessions ? (
                  <Link className="text-brand-700 underline" href={`/sessions/${e.sessionId}`}>
                    {e.experiment} #{e.gameId ?? '?'}
                  </Link>
                ) : (
                  `${e.experiment} #${e.gameId ?? '?'}`
                )}
                {run.run.repetitions > 1 ? (
                  <span className="text-xs text-stone-500"> · episode {e.repetition}</span>
                ) : null}
              </Td>
              <Td>{e.player}</Td>
              <Td>
                <StatusBadge status={e.status} />
              </Td>
              <Td className="tabular-nums">{e.aborted === 1 ? 'aborted' : n3(e.mainScore)}</Td>
              <Td className="tabular-nums">{n3(e.accuracy)}</Td>
              <Td className="tabular-nums">{n3(e.kappa)}</Td>
              <Td className="tabular-nums">{n3(e.slotFilling)}</Td>
              <Td className="tabular-nums">{n3(e.middleAccuracy)}</Td>
              <Td className="tabular-nums">{e.requests === null ? '—' : `${e.parsedRequests}/${e.requests}`}</Td>
            </tr>
          ))}
        </Table>
        <Pagination
          page={d.episodes.page}
          pageCount={d.episodes.pageCount}
          total={d.episodes.total}
          params={params}
          basePath={basePath}
        />
      </Card>
    </div>
  )
}
