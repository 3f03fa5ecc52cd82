import { Badge } from '@/components/ui/card'

const TONES: Record<string, 'stone' | 'green' | 'amber' | 'red' | 'brand'> = {
  draft: 'stone',
  queued: 'stone',
  waiting: 'stone',
  running: 'brand',
  paused: 'amber',
  cancelled: 'stone',
  done: 'green',
  awaiting: 'amber',
  stalled: 'red',
}

const LABELS: Record<string, string> = {
  awaiting: 'awaiting a person',
  waiting: 'waiting for the previous session',
  running: 'running',
}

/** A run's or a session's status as a chip (colour is never the only cue: the word is there). */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <Badge tone={TONES[status] ?? 'stone'}>{label ?? LABELS[status] ?? status}</Badge>
}

/** What a session is doing, in words: "awaiting Elias", "stalled: …", "waiting for the previous session". */
export function sessionState(s: {
  status: string
  awaitingSeat?: string | null
  stallError?: string | null
  stopReason?: string | null
  people?: ReadonlyArray<{ seat: string; user: { name?: string | null; email: string } | null; claimable?: boolean }>
}): string {
  if (s.status === 'awaiting') {
    const p = s.people?.find((x) => x.seat === s.awaitingSeat)
    const who = p?.user ? p.user.name || p.user.email : p?.claimable ? 'someone to claim the seat' : 'a person'
    return `awaiting ${who}`
  }
  if (s.status === 'stalled') return `stalled: ${s.stallError ?? 'unknown error'}`
  if (s.status === 'waiting') return 'waiting for the previous session'
  if (s.status === 'done') return s.stopReason ? `done: ${s.stopReason}` : 'done'
  return s.status
}
