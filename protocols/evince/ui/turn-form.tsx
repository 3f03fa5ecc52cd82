import { TurnEditor } from '@/protocols/evince/ui/turn-editor'
import type { TurnFormProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { TurnMessage } from '@/protocols/evince/core'
import type { EvinceSessionView as View } from '@/protocols/evince/server/plugin'

/** A person's debate turn: the top-k editor, starting from their previous distribution. */
export function EvinceTurnForm({ session: s }: TurnFormProps) {
  const view = s.view as View
  if (!s.ask || !view.next || view.next.kind !== 'turn') return null
  const seat = s.ask.seat
  const last = [...view.pool].reverse().find((t: TurnMessage) => t.sender === seat)
  return (
    <Card title="Your turn">
      <TurnEditor
        key={s.ask.j}
        sessionId={s.id}
        protocol={s.protocol}
        seq={s.ask.j}
        k={view.config.k}
        round={view.next.round}
        initial={last?.predictions ?? []}
        labels={view.config.labels}
        serverDraft={s.draft?.data ?? null}
      />
    </Card>
  )
}
