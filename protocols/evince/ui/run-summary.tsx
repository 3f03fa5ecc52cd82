import Link from 'next/link'
import { MergeLabels } from '@/protocols/evince/ui/merge-labels'
import type { RunSummaryProps } from '@/components/protocols/types'
import { RetryButton } from '@/components/runs/run-controls'
import { StatusBadge } from '@/components/runs/status'
import { Card } from '@/components/ui/card'
import { ScrollRegion } from '@/components/ui/scroll-region'
import { Pagination, Table, Td } from '@/components/ui/table'
import { STOP_REASONS } from '@/protocols/evince/core'
import type { EvinceRunView } from '@/protocols/evince/server/plugin'

const pct = (x: number) => `${(x * 100).toFixed(1)}%`

/**
 * The debate part of the run page: the settings, how the debates stopped, accuracy of each
 * predictor with intervals, label merges for the results, the confusion of final top-1 against the
 * ground truth, and every case with its final distribution.
 */
export function EvinceRunSummary({ run, data, canRun, params: sp, basePath }: RunSummaryProps) {
  const d = data as EvinceRunView | null
  if (!d) return null
  return (
    <div className="space-y-4">
      <Card title="Debate settings">
        <p className="text-sm text-stone-700">
          k = {d.config.k} · max {d.config.maxRounds} rounds · τ = {d.config.tau} · Δ₀ = {d.config.delta.initial} ×
          {d.config.delta.decay} after {d.config.delta.hold} rounds
          {d.config.labels.length ? ` · constrained to ${d.config.labels.length} labels` : ' · free labels'}
          {d.config.crit ? '' : ' · no judge (equal weights, no report)'}
        </p>
        {Object.keys(d.stops).length ? (
          <p className="mt-1 text-sm text-stone-500">
            Stops:{' '}
            {Object.entries(d.stops)
              .map(([r, n]) => `${STOP_REASONS[r as keyof typeof STOP_REASONS] ?? r} (${n})`)
              .join(' · ')}
          </p>
        ) : null}
      </Card>

      {d.excluded.count ? (
        <div className="rounded-md border border-amber-200 bg-amber-50 p-3 text-sm" data-testid="excluded-cases">
          <p className="font-medium text-amber-900">
            {d.excluded.count} debate{d.excluded.count === 1 ? ' is' : 's are'} left out of every result below
            (accuracy, intervals, confusion, finals): {d.excluded.count === 1 ? 'its log holds' : 'their logs hold'} a
            message the rules refuse, written before the rule existed. The inspector shows each log as stored.
          </p>
          <ul className="mt-1 list-disc pl-5 text-amber-900">
            {d.excluded.cases.map((c) => (
              <li key={c.sessionId}>
                <Link href={`/runs/${run.run.id}/sessions/${c.sessionId}`} className="underline">
                  Case {c.position + 1}
                </Link>
                : {c.reason}
              </li>
            ))}
          </ul>
          {d.excluded.count > d.excluded.cases.length ? (
            <p className="mt-1 text-amber-900">… and {d.excluded.count - d.excluded.cases.length} more.</p>
          ) : null}
        </div>
      ) : null}

      <Card title={`Accuracy over ${d.accuracy.n} finished case${d.accuracy.n === 1 ? '' : 's'} with a ground truth`}>
        {d.accuracy.n === 0 ? (
          <p className="text-sm text-stone-500">Appears when cases with a ground truth have finished.</p>
        ) : (
          <table className="w-full text-sm tabular-nums" data-testid="accuracy-table">
            <thead>
              <tr className="text-left text-xs text-stone-500">
                <th className="pb-1 font-medium">Predictor</th>
                <th className="pb-1 font-medium">Top-1 (95% CI)</th>
                <th className="pb-1 font-medium">Top-{d.config.k} (95% CI)</th>
                <th className="pb-1 font-medium">MRR (95% CI)</th>
              </tr>
            </thead>
            <tbody>
              {d.accuracy.rows.map((r) => (
                <tr key={r.key} data-key={r.key} data-top1={r.top1} data-mrr={r.mrr}>
                  <td className="py-0.5">{r.label}</td>
                  <td>
                    {pct(r.top1)} ({pct(r.top1Ci[0])}–{pct(r.top1Ci[1])})
                  </td>
                  <td>
                    {pct(r.topk)} ({pct(r.topkCi[0])}–{pct(r.topkCi[1])})
                  </td>
                  <td>
                    {r.mrr.toFixed(3)} ({r.mrrCi[0].toFixed(3)}–{r.mrrCi[1].toFixed(3)})
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p className="mt-2 text-xs text-stone-500">
          Labels compared after canonicalisation (parentheticals stripped, case-folded, aliases). Ranks break ties by
          listed order; MRR counts ranks up to k (0 otherwise). Wilson intervals for proportions, normal intervals for
          MRR.
        </p>
      </Card>

      {canRun && d.accuracy.n > 0 ? (
        <Card title="Merge labels for these results">
          <p className="mb-2 text-xs text-stone-500">
            Merges change how finished debates are scored here (accuracy, confusion), never the debates: their stop rule
            ran with the aliases set up front.
          </p>
          <MergeLabels
            runId={run.run.id}
            merges={d.merges}
            labels={[...new Set([...d.confusion.truths, ...d.confusion.predicted])]}
          />
        </Card>
      ) : null}

      {d.confusion.truths.length ? (
        <Card title="Final top-1 against the ground truth">
          <ScrollRegion label="Confusion table" className="overflow-x-auto">
            <table className="text-xs tabular-nums" data-testid="confusion">
              <thead>
                <tr>
                  <th className="p-1 text-left font-medium text-stone-500">truth ↓ / predicted →</th>
                  {d.confusion.names.map((name, j) => (
                    <th
                      key={d.confusion.labels[j]}
                      scope="col"
                      className="w-16 p-1 align-bottom font-medium text-stone-600"
                      data-col={name}
                    >
                      {name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {d.confusion.labels.map((t, i) => (
                  <tr key={t}>
                    <th
                      scope="row"
                      className="p-1 text-left font-medium text-stone-700"
                      data-row={d.confusion.names[i]}
                    >
                      {d.confusion.names[i]}
                    </th>
                    {d.confusion.matrix[i]?.map((n, j) => (
                      <td
                        key={d.confusion.labels[j]}
                        data-diagonal={i === j ? 'true' : undefined}
                        className={`h-10 w-16 p-1 text-center ${i === j ? 'border border-green-300' : ''} ${n ? (i === j ? 'bg-green-100' : 'bg-red-50') : 'text-stone-500'}`}
                      >
                        {n}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
            <p className="mt-1 text-xs text-stone-500">
              The same labels in the same order on both axes: the diagonal (outlined) holds the correct cases.
            </p>
          </ScrollRegion>
        </Card>
      ) : null}

      <Table caption="Cases" head={['#', 'Case', 'Truth', 'Final top-1', 'Rounds', 'Stop', 'Status']}>
        {d.cases.items.map((c) => (
          <tr key={c.sessionId}>
            <Td>{c.position + 1}</Td>
            <Td className="max-w-md">
              {run.can.openSessions ? (
                <Link href={`/sessions/${c.sessionId}`} className="text-brand-700 underline">
                  {c.symptoms.length > 90 ? `${c.symptoms.slice(0, 89)}…` : c.symptoms}
                </Link>
              ) : c.symptoms.length > 90 ? (
                `${c.symptoms.slice(0, 89)}…`
              ) : (
                c.symptoms
              )}
            </Td>
            <Td>{c.truth || '—'}</Td>
            <Td>{c.final?.[0] ? `${c.final[0].label} (${pct(c.final[0].probability)})` : '—'}</Td>
            <Td>{c.rounds}</Td>
            <Td>{c.stopReason ? (STOP_REASONS[c.stopReason as keyof typeof STOP_REASONS] ?? c.stopReason) : '—'}</Td>
            <Td>
              <StatusBadge status={c.status} />
              {c.excluded ? <span className="ml-1 text-xs text-amber-800">excluded</span> : null}
              {c.status === 'stalled' && canRun ? <RetryButton sessionId={c.sessionId} runId={run.run.id} /> : null}
            </Td>
          </tr>
        ))}
      </Table>
      <Pagination {...d.cases} params={sp} basePath={basePath} />
    </div>
  )
}
