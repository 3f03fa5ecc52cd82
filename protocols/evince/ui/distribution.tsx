/** A top-k distribution as horizontal bars with justifications (plain text: model output is never HTML). */
export function DistributionBars({
  predictions,
  tone = 'a',
  testId,
}: {
  predictions: Array<{ label: string; probability: number; justification?: string; listedAs?: string[] }>
  tone?: 'a' | 'b' | 'final'
  testId?: string
}) {
  const color = tone === 'a' ? 'bg-teal-600' : tone === 'b' ? 'bg-amber-600' : 'bg-indigo-600'
  const total = predictions.reduce((s, p) => s + p.probability, 0) || 1
  return (
    <ol className="space-y-1.5" data-testid={testId}>
      {predictions.map((p) => {
        const share = p.probability / total
        return (
          <li key={p.label} data-label={p.label} data-probability={p.probability}>
            <div className="flex items-baseline justify-between gap-2 text-sm">
              <span className="font-medium text-stone-900">
                {p.label}
                {p.listedAs?.length ? (
                  <span className="ml-1 text-xs font-normal text-stone-500" data-listed-as={p.listedAs.join(' | ')}>
                    (listed as {p.listedAs.map((l) => `“${l}”`).join(' + ')})
                  </span>
                ) : null}
              </span>
              <span className="tabular-nums text-stone-700">{(p.probability * 100).toFixed(1)}%</span>
            </div>
            <div className="mt-0.5 h-2 w-full rounded bg-stone-100" aria-hidden="true">
              <div className={`h-2 rounded ${color}`} style={{ width: `${Math.min(100, share * 100)}%` }} />
            </div>
            {p.justification ? <p className="mt-0.5 text-xs text-stone-600">{p.justification}</p> : null}
          </li>
        )
      })}
    </ol>
  )
}
