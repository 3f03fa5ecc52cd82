import type { MessageBodyProps } from '@/components/protocols/types'
import type { EvinceMessage } from '@/protocols/evince/core'

const pct = (x: number) => `${(x * 100).toFixed(1)}%`

/** One debate message in the inspector: a turn's top-k, a CRIT score, or the report's conclusion. */
export function EvinceMessageBody({ body }: MessageBodyProps) {
  const m = body as EvinceMessage
  if (m.kind === 'turn')
    return (
      <div className="text-sm">
        <p className="text-xs text-stone-500">
          Turn, round {m.round}
          {m.arguments.length ? ` · ${m.arguments.length} arguments` : ''}
          {m.counterArguments.length ? ` · ${m.counterArguments.length} counter-arguments` : ''}
        </p>
        <p>{m.predictions.map((p) => `${p.label} ${pct(p.probability)}`).join(' · ')}</p>
      </div>
    )
  if (m.kind === 'crit')
    return (
      <p className="text-sm">
        CRIT of {m.target}, round {m.round}: Γ = {m.score.toFixed(3)} ({m.reasons.length} reasons)
        {m.comment ? <span className="block text-xs italic text-stone-600">{m.comment}</span> : null}
      </p>
    )
  if (m.kind === 'report')
    return (
      <p className="text-sm">
        <span className="text-xs text-stone-500">Report: </span>
        {m.conclusion}
      </p>
    )
  return <pre className="whitespace-pre-wrap text-xs">{JSON.stringify(body, null, 2)}</pre>
}
