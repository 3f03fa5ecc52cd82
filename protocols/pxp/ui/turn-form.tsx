import { RespondForm } from '@/protocols/pxp/ui/respond-form'
import type { TurnFormProps } from '@/components/protocols/types'
import { Card } from '@/components/ui/card'
import type { PxpMessage } from '@/protocols/pxp/core'
import type { PxpSessionView as View } from '@/protocols/pxp/server/plugin'

/** The person's PXP message: two judgements of the partner's answer, their own answer, the tag. */
export function PxpTurnForm({ session: s }: TurnFormProps) {
  if (!s.ask) return null
  const view = s.view as View
  const seat = s.ask.seat
  const own = [...s.messages]
    .reverse()
    .map((m) => m.body as PxpMessage)
    .find((m) => m.sender === seat)
  return (
    <Card title={`Your response (message ${s.ask.j})`}>
      <RespondForm
        key={`${s.id}:${s.ask.j}`}
        sessionId={s.id}
        protocol={s.protocol}
        j={s.ask.j}
        k={view.config.k}
        ownPrev={own ? { y: own.prediction, e: own.explanation } : undefined}
        answer={view.answer}
        serverDraft={s.draft?.data ?? null}
        partner={`the ${(s.seats.find((x) => x.name !== seat)?.label ?? 'partner').toLowerCase()}`}
      />
    </Card>
  )
}
