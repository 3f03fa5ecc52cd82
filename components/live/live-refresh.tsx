'use client'

import { useLive } from './use-live'

/** Keeps a server-rendered page current: re-reads it whenever its topic changes. */
export function LiveRefresh({ topic, label = 'Live' }: { topic: string; label?: string }) {
  const { connected } = useLive(topic)
  return (
    <span className="inline-flex items-center gap-1.5 text-xs text-stone-500" role="status" data-testid="live-status">
      <span aria-hidden="true" className={`h-2 w-2 rounded-full ${connected ? 'bg-green-500' : 'bg-stone-300'}`} />
      {connected ? label : 'Reconnecting…'}
    </span>
  )
}
