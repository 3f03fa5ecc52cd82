import type { RunSummaryProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { MintRunView } from '@/protocols/mint/server/run-view'
import { ToolUnavailable } from '@/protocols/mint/ui/tool-unavailable'

const pct = (x: number | null) => (x === null ? '—' : `${x.toFixed(2)} %`)

/**
 * The run's success rate SR_k at its own budget k (each k is its own run, as in the paper), per task type
 * and data set, the terminate reasons and the invalid-action ratio (flagged above 20 %).
 */
export function MintRunSummary({ data }: RunSummaryProps) {
  const v = data as MintRunView | null
  if (!v) return null
  return (
    <div className="space-y-3">
      {!v.sandbox.available ? <ToolUnavailable sandbox={v.sandbox} /> : null}
      <Card title={`Results: SR at k = ${v.k} (p = ${v.p}; feedback ${v.feedback})`}>
        <p className="text-sm text-stone-600">
          {v.finished} of {v.total} episodes ended.
        </p>
        <dl className="mt-2 grid grid-cols-2 gap-2 text-sm sm:grid-cols-4" data-testid="mint-run-summary">
          <div>
            <dt className="text-xs text-stone-500">SR (micro)</dt>
            <dd className="font-medium">{pct(v.sr)}</dd>
          </div>
          {Object.entries(v.byType).map(([k, x]) => (
            <div key={k}>
              <dt className="text-xs text-stone-500">SR {k.replace('_', ' ')}</dt>
              <dd className="font-medium">{pct(x)}</dd>
            </div>
          ))}
          {Object.entries(v.byTask).map(([k, x]) => (
            <div key={k}>
              <dt className="text-xs text-stone-500">SR {k}</dt>
              <dd className="font-medium">{pct(x)}</dd>
            </div>
          ))}
          <div>
            <dt className="text-xs text-stone-500">Invalid actions</dt>
            <dd className={`font-medium ${v.invalidFlagged ? 'text-red-700' : ''}`}>
              {pct(v.invalidRatio)}
              {v.invalidFlagged ? ' (above 20 %)' : ''}
            </dd>
          </div>
        </dl>
        <p className="mt-2 text-xs text-stone-500">
          Ended by:{' '}
          {Object.entries(v.reasons)
            .map(([r, n]) => `${r} ${n}`)
            .join(', ') || '—'}
        </p>
      </Card>
    </div>
  )
}
