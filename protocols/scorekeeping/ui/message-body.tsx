import type { MessageBodyProps } from '@/components/protocols/types'
import type { ScorekeepingMessage } from '@/protocols/scorekeeping/core'

/** One message of the game in the inspector. */
export function ScorekeepingMessageBody({ body }: MessageBodyProps) {
  const m = body as ScorekeepingMessage
  const where =
    m.kind === 'request'
      ? `Request (${m.slot}), round ${m.round}`
      : m.kind === 'answer'
        ? `Answer, round ${m.round}`
        : m.kind === 'probe'
          ? `Probe of ${m.slot}, round ${m.round}, try ${m.try}`
          : `Probe answer (${m.slot}), round ${m.round}, try ${m.try}`
  return (
    <div className="text-sm">
      <p className="text-xs text-stone-500">{where}</p>
      <p className="whitespace-pre-wrap">{m.text}</p>
    </div>
  )
}
