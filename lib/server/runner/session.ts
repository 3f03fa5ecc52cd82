import { sql } from '@/lib/server/db'
import { publish, publishSession } from '@/lib/server/live'
import { pgText } from '@/lib/server/pg-text'

/**
 * What every protocol's runner does to a session besides appending messages: record that it ended,
 * waits for a person or stalled (each a status change with its live notice), stream a model's
 * answer to watching pages, and step it until it stops moving. One copy for PXP and EVINCE.
 */
interface SessionRef {
  id: string
  experimentId: string | null
  /** The status the step found (a notice goes out only when it changes). */
  status: string
}

export async function markDone(s: SessionRef, reason: string): Promise<{ kind: 'done'; reason: string }> {
  if (s.status !== 'done') {
    await sql().query(
      `UPDATE "ProtocolSession" SET status = 'done', "stopReason" = $2, "doneAt" = COALESCE("doneAt", now()),
         "stallError" = NULL, "updatedAt" = now()
       WHERE id = $1`,
      [s.id, reason],
    )
    void publishSession(s.id, s.experimentId, { type: 'status', status: 'done' })
  }
  return { kind: 'done', reason }
}

export async function markAwaiting(s: SessionRef): Promise<void> {
  if (s.status === 'awaiting') return
  await sql().query(
    `UPDATE "ProtocolSession" SET status = 'awaiting', "stallError" = NULL, "updatedAt" = now() WHERE id = $1`,
    [s.id],
  )
  await publishSession(s.id, s.experimentId, { type: 'status', status: 'awaiting' })
}

/** Nothing was appended: the session stays resumable from the message it could not write. */
export async function markStalled(s: SessionRef, error: string): Promise<{ kind: 'stalled'; error: string }> {
  await sql().query(
    `UPDATE "ProtocolSession" SET status = 'stalled', "stallError" = $2, "updatedAt" = now() WHERE id = $1`,
    [s.id, pgText(error)],
  )
  await publishSession(s.id, s.experimentId, { type: 'status', status: 'stalled' })
  return { kind: 'stalled', error }
}

/** Publishes the text streamed so far at most every 80 ms (the stored message replaces it). */
export function streamTo(sessionId: string, seq: number, seat?: string) {
  let last = 0
  let pending: ReturnType<typeof setTimeout> | undefined
  let text = ''
  const send = () => {
    pending = undefined
    last = Date.now()
    void publish(`session:${sessionId}`, { type: 'delta', seq, text, ...(seat ? { seat } : {}) })
  }
  return (_delta: string, info: { text: string }) => {
    text = info.text
    if (pending) return
    pending = setTimeout(send, Math.max(0, 80 - (Date.now() - last)))
  }
}

/** Step until the session needs a person, stalls, or ends (a lost race just steps again). */
export async function runUntilStill<R extends { kind: string }>(
  step: () => Promise<R>,
  maxSteps: number,
  initial: R,
): Promise<R> {
  let last = initial
  for (let i = 0; i < maxSteps; i++) {
    last = await step()
    if (last.kind !== 'appended' && last.kind !== 'conflict') return last
  }
  return last
}
