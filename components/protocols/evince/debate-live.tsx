'use client'

import { useState } from 'react'
import { type LiveEvent, useLive } from '@/components/live/use-live'
import { DistributionBars } from '@/components/protocols/evince/distribution'
import type { LivePreviewProps } from '@/components/protocols/types'
import { partialPredictions } from '@/lib/tasks/evince-prompts'

/**
 * Keeps the debate page current and shows the answer being written (the distribution as far as it
 * has streamed, else the raw text, until the stored turn replaces it). Text only: model output is
 * never rendered as HTML.
 */
export function DebateLive({ sessionId, lastSeq, active }: LivePreviewProps) {
  const [draft, setDraft] = useState<{ seq: number; seat: string; text: string } | null>(null)
  const { connected } = useLive(`session:${sessionId}`, {
    onEvent: (e: LiveEvent) => {
      if (e.type === 'delta') setDraft({ seq: e.seq, seat: e.seat ?? '', text: e.text })
      else if (e.type === 'message') setDraft(null)
    },
  })
  return (
    <div className="space-y-2">
      <span className="inline-flex items-center gap-1.5 text-xs text-stone-500" role="status" data-testid="live-status">
        <span aria-hidden="true" className={`h-2 w-2 rounded-full ${connected ? 'bg-green-500' : 'bg-stone-300'}`} />
        {active ? (connected ? 'Live' : 'Reconnecting…') : 'Finished'}
      </span>
      {draft && draft.seq > lastSeq ? (
        <div
          className="rounded-md border border-dashed border-stone-300 bg-stone-50 p-3 text-xs"
          aria-live="polite"
          data-testid="debate-streaming"
        >
          <p className="mb-1 text-stone-500">Debater {draft.seat} is writing…</p>
          {partialPredictions(draft.text).length ? (
            <div className="w-72">
              <DistributionBars predictions={partialPredictions(draft.text)} tone={draft.seat === 'B' ? 'b' : 'a'} />
            </div>
          ) : (
            <p className="whitespace-pre-wrap font-mono text-stone-700">{draft.text.slice(-1200)}</p>
          )}
        </div>
      ) : null}
    </div>
  )
}
