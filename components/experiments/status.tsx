import { Badge } from '@/components/ui/card'

const TONES: Record<string, 'stone' | 'green' | 'amber' | 'red' | 'brand'> = {
  draft: 'stone',
  running: 'brand',
  paused: 'amber',
  cancelled: 'stone',
  done: 'green',
  awaiting: 'amber',
  stalled: 'red',
}

const LABELS: Record<string, string> = {
  awaiting: 'awaiting a person',
  running: 'running',
}

/** An experiment's or a session's status as a chip (colour is never the only cue: the word is there). */
export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={TONES[status] ?? 'stone'}>{LABELS[status] ?? status}</Badge>
}
