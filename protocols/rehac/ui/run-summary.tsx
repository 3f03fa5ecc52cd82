import type { RunSummaryProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { RehacRunView } from '@/protocols/rehac/server/views'
import { pct } from '@/protocols/rehac/ui/format'

/** The run's means (T, EM, C, R at λ = 0.08, pooled HIR) over its ended episodes. */
export function RehacRunSummary({ data }: RunSummaryProps) {
  const v = data as RehacRunView | null
  if (!v) return null
  return (
    <Card title={`Results (λ = ${v.lambda})`}>
      <p className="text-sm text-stone-600">
        {v.finished} of {v.total} episodes ended.
      </p>
      {v.examples && (
        <p className="text-xs text-stone-500" data-testid="rehac-prompt-examples">
          Prompt policy examples:{' '}
          {v.examples.source === 'study'
            ? `sessions ${v.examples.sessionIds.join(' (agent alone) and ')} (with a human step), from this study`
            : `Parley's built-in pair (${v.examples.reason})`}
        </p>
      )}
      <dl className="mt-2 grid grid-cols-5 gap-2 text-sm" data-testid="rehac-run-summary">
        {(
          [
            ['T', pct(v.summary.T)],
            ['EM', pct(v.summary.em)],
            ['C', v.summary.C === null ? '—' : v.summary.C.toFixed(2)],
            ['R', pct(v.summary.R)],
            ['HIR', pct(v.summary.hir)],
          ] as const
        ).map(([k, value]) => (
          <div key={k}>
            <dt className="text-xs text-stone-500">{k}</dt>
            <dd className="font-medium">{value}</dd>
          </div>
        ))}
      </dl>
    </Card>
  )
}
