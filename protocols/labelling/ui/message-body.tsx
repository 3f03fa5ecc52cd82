import type { MessageBodyProps } from '@/components/protocols/types'
import { LabellingMessage } from '@/protocols/labelling/core/protocol'

/** One label in the inspector: its answers (and judges, rationale, time), or why a reply was unparseable. */
export function LabellingMessageBody({ body }: MessageBodyProps) {
  const m = LabellingMessage.safeParse(body)
  if (!m.success) return <pre className="text-xs">{JSON.stringify(body)}</pre>
  const l = m.data
  if (l.kind === 'unparseable') return <p className="text-sm">Unparseable reply: {l.reason}</p>
  return (
    <p className="text-sm">
      {Object.entries(l.answers)
        .map(([q, a]) => `${q} = ${a}`)
        .join(' · ')}
      {l.judges ? <span className="text-stone-500"> (mean of {l.judges.length} judges)</span> : null}
      {l.elapsedMs !== undefined ? (
        <span className="text-stone-500"> · {Math.round(l.elapsedMs / 100) / 10} s</span>
      ) : null}
      {l.rationale ? <span className="block text-stone-600">{l.rationale}</span> : null}
    </p>
  )
}
