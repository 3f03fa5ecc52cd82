import type { Metadata } from 'next'
import Link from 'next/link'
import { MergeLabels } from '@/components/debates/merge-labels'
import { RetryButton, RunControls } from '@/components/experiments/run-controls'
import { PreparingNotice, StatusBadge } from '@/components/experiments/status'
import { LiveRefresh } from '@/components/live/live-refresh'
import { Card, PageHeader } from '@/components/ui/card'
import { Pagination, Table, Td } from '@/components/ui/table'
import { hasScope } from '@/lib/server/auth/roles'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { getDebate } from '@/lib/server/services/debates'
import { STOP_REASONS } from '@/lib/protocols/evince'

export const metadata: Metadata = { title: 'Debate run' }

const pct = (x: number) => `${(x * 100).toFixed(1)}%`

export default async function DebateRunPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:read')
  const { id } = await params
  const sp = await flatParams(searchParams)
  const d = await loadForPage(getDebate, { experimentId: id, page: sp.page })
  // Running, merging labels and exporting are write access to the study (account scope and study role).
  const canRun = hasScope(actor.role, 'studies:update') && d.access.includes('write')
  const e = d.experiment
  return (
    <>
      <PageHeader
        title={e.name}
        description={
          <>
            EVINCE debate run in{' '}
            <Link href={`/studies/${e.study.id}`} className="hover:underline">
              {e.study.name}
            </Link>{' '}
            · k = {d.config.k} · max {d.config.maxRounds} rounds · τ = {d.config.tau} · Δ₀ = {d.config.delta.initial} ×
            {d.config.delta.decay} after {d.config.delta.hold} rounds
            {d.config.labels.length ? ` · constrained to ${d.config.labels.length} labels` : ' · free labels'}
          </>
        }
        actions={
          <div className="flex flex-col items-end gap-2">
            <LiveRefresh topic={`experiment:${e.id}`} />
            {canRun ? <RunControls experimentId={e.id} status={e.status} /> : null}
          </div>
        }
      />
      <div className="space-y-4">
        {e.status === 'preparing' && (
          <Card>
            <PreparingNotice planned={e.sessionsPlanned} created={e.sessionsCreated} error={e.prepareError} />
          </Card>
        )}
        <Card>
          <div className="flex flex-wrap items-center gap-4 text-sm">
            <StatusBadge status={e.status} />
            <span data-testid="count-done" data-done={d.counts.done} data-total={d.counts.total}>
              {d.counts.done} / {d.counts.total} cases done
            </span>
            <span className="text-stone-500">
              {d.counts.running} running · {d.counts.awaiting} waiting for a person · {d.counts.stalled} stalled
            </span>
            {Object.keys(d.stops).length ? (
              <span className="text-stone-500">
                Stops:{' '}
                {Object.entries(d.stops)
                  .map(([r, n]) => `${STOP_REASONS[r as keyof typeof STOP_REASONS] ?? r} (${n})`)
                  .join(' · ')}
              </span>
            ) : null}
            {canRun ? (
              <span className="ml-auto flex gap-3">
                <a
                  className="text-brand-700 hover:underline"
                  href={`/api/debates/${e.id}/export?table=rounds&format=csv`}
                >
                  Rounds CSV
                </a>
                <a
                  className="text-brand-700 hover:underline"
                  href={`/api/debates/${e.id}/export?table=rounds&format=jsonl`}
                >
                  Rounds JSONL
                </a>
                <a
                  className="text-brand-700 hover:underline"
                  href={`/api/debates/${e.id}/export?table=finals&format=csv`}
                >
                  Finals CSV
                </a>
                <a
                  className="text-brand-700 hover:underline"
                  href={`/api/debates/${e.id}/export?table=finals&format=jsonl`}
                >
                  Finals JSONL
                </a>
              </span>
            ) : null}
          </div>
        </Card>

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
              Merges change how finished debates are scored here (accuracy, confusion), never the debates: their stop
              rule ran with the aliases set up front.
            </p>
            <MergeLabels
              experimentId={e.id}
              merges={d.merges}
              labels={[...new Set([...d.confusion.truths, ...d.confusion.predicted])]}
            />
          </Card>
        ) : null}

        {d.confusion.truths.length ? (
          <Card title="Final top-1 against the ground truth">
            <div className="overflow-x-auto">
              <table className="text-xs tabular-nums" data-testid="confusion">
                <thead>
                  <tr>
                    <th className="p-1 text-left font-medium text-stone-500">truth ↓ / predicted →</th>
                    {d.confusion.predicted.map((p) => (
                      <th key={p} className="p-1 font-medium text-stone-600">
                        {p}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {d.confusion.truths.map((t, i) => (
                    <tr key={t}>
                      <th className="p-1 text-left font-medium text-stone-700">{t}</th>
                      {d.confusion.counts[i]?.map((n, j) => (
                        <td
                          key={d.confusion.predicted[j]}
                          className={`p-1 text-center ${n ? (d.confusion.predicted[j] === t ? 'bg-green-100' : 'bg-red-50') : 'text-stone-300'}`}
                        >
                          {n}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
        ) : null}

        <Table caption="Cases" head={['#', 'Case', 'Truth', 'Final top-1', 'Rounds', 'Stop', 'Status']}>
          {d.cases.items.map((c) => (
            <tr key={c.sessionId}>
              <Td>{c.position + 1}</Td>
              <Td className="max-w-md">
                <Link href={`/debates/sessions/${c.sessionId}`} className="text-brand-700 hover:underline">
                  {c.symptoms.length > 90 ? `${c.symptoms.slice(0, 89)}…` : c.symptoms}
                </Link>
              </Td>
              <Td>{c.truth || '—'}</Td>
              <Td>{c.final?.[0] ? `${c.final[0].label} (${pct(c.final[0].probability)})` : '—'}</Td>
              <Td>{c.rounds}</Td>
              <Td>{c.stopReason ? (STOP_REASONS[c.stopReason as keyof typeof STOP_REASONS] ?? c.stopReason) : '—'}</Td>
              <Td>
                <StatusBadge status={c.status} />
                {c.status === 'stalled' && canRun ? <RetryButton sessionId={c.sessionId} experimentId={e.id} /> : null}
              </Td>
            </tr>
          ))}
        </Table>
        <Pagination {...d.cases} params={sp} basePath={`/debates/${e.id}`} />
      </div>
    </>
  )
}
