import type { SessionData } from '@/components/protocols/types'

/**
 * What every turn form posts besides its own fields: the session, the message number it answers
 * (a second send of the same message is refused) and the protocol (how the fields are read).
 */
export function TurnHiddenFields({ session, seq }: { session: Pick<SessionData, 'id' | 'protocol'>; seq: number }) {
  return (
    <>
      <input type="hidden" name="sessionId" value={session.id} />
      <input type="hidden" name="seq" value={seq} />
      <input type="hidden" name="protocol" value={session.protocol} />
    </>
  )
}
