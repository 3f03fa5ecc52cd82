import { Badge } from '@/components/ui/card'

const TONES: Record<string, 'stone' | 'green' | 'amber' | 'red' | 'brand'> = {
  preparing: 'amber',
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
  preparing: 'creating sessions',
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

/** A run whose sessions are still being created (a job writes them in batches; Start waits for it). */
export function PreparingNotice({
  planned,
  created,
  error,
}: {
  planned: number
  created: number
  error?: string | null
}) {
  const pct = planned ? Math.min(100, Math.round((100 * created) / planned)) : 0
  return (
    <div className="mb-4 space-y-2 rounded-md border border-amber-200 bg-amber-50 p-3 text-sm" data-testid="preparing">
      <p>
        Creating sessions: {created.toLocaleString('en')} / {planned.toLocaleString('en')} ({pct} %). It can start once
        they are all there.
      </p>
      <div
        role="progressbar"
        aria-label="Sessions created"
        aria-valuemin={0}
        aria-valuemax={planned}
        aria-valuenow={created}
        className="h-2 w-full overflow-hidden rounded-full bg-white"
      >
        <div className="h-full bg-amber-500 transition-all" style={{ width: `${pct}%` }} />
      </div>
      {error && <p className="text-xs text-red-700">{error}</p>}
    </div>
  )
}
