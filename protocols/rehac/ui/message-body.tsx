import type { MessageBodyProps } from '@/components/protocols/types'
import type { RehacMessage } from '@/protocols/rehac/core/protocol'
import { actionLabel } from '@/protocols/rehac/ui/format'

/** One message of an episode in the inspector: a decision, a step or an observation. */
export function RehacMessageBody({ body, meta }: MessageBodyProps) {
  const m = body as RehacMessage
  const simulated = (meta as { simulated?: boolean } | undefined)?.simulated === true
  if (m.kind === 'decide')
    return (
      <p className="text-sm">
        Step {m.t}: the <strong>{m.solver}</strong> acts
        {m.pHuman !== null ? <span className="text-stone-500"> (p(human) = {m.pHuman.toFixed(3)})</span> : null}
      </p>
    )
  if (m.kind === 'step')
    return (
      <div className="space-y-1 text-sm">
        <p className="text-xs text-stone-500">
          Step {m.t} by the {m.sender}
          {simulated ? ' (simulated)' : ''}
          {m.suggestion ? ` · suggestion ${m.suggestion}` : ''}
          {m.ms !== null ? ` · ${(m.ms / 1000).toFixed(1)} s` : ''}
        </p>
        {m.thought ? <p className="whitespace-pre-wrap">Thought: {m.thought}</p> : null}
        <p className="whitespace-pre-wrap font-mono text-xs">{actionLabel(m.action)}</p>
      </div>
    )
  return (
    <div className="text-sm">
      <p className="text-xs text-stone-500">
        Observation {m.t}
        {m.finished ? ' · the episode ends' : ''}
      </p>
      <p className="whitespace-pre-wrap">{m.text}</p>
    </div>
  )
}
