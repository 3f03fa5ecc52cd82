import { Badge } from '@/components/ui/card'

const TONES: Record<string, 'stone' | 'green' | 'amber' | 'red' | 'brand'> = {
  preparing: 'amber',
  draft: 'stone',
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
  running: 'running',
}

/** An experiment's or a session's status as a chip (colour is never the only cue: the word is there). */
export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={TONES[status] ?? 'stone'}>{LABELS[status] ?? status}</Badge>
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
    <div className="space-y-2 text-sm" data-testid="preparing">
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
        className="h-2 w-full overflow-hidden rounded-full bg-stone-100"
      >
        <div className="h-full bg-amber-500 transition-all" style={{ width: `${pct}%` }} />
      </div>
      {error && <p className="text-xs text-red-700">{error}</p>}
    </div>
  )
}
