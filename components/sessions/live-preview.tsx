'use client'

import { type ReactNode, useState } from 'react'
import { type LiveEvent, useLive } from '@/components/live/use-live'
import type { LivePreviewProps } from '@/components/protocols/types'

/** An answer as far as it has streamed (which message, which seat, the text so far). */
export interface LiveDraft {
  seq: number
  seat: string
  text: string
}

/**
 * Keeps the session page current (new messages, status) and shows the partner's answer as it
 * streams in, until the stored message replaces it. Text only: model output is never HTML here.
 * A protocol may draw the draft its own way (`renderDraft`, e.g. a debater's distribution so far).
 */
export function LivePreview({
  sessionId,
  lastSeq,
  active,
  renderDraft,
}: LivePreviewProps & { renderDraft?: (draft: LiveDraft) => ReactNode }) {
  const [draft, setDraft] = useState<LiveDraft | null>(null)
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
        renderDraft ? (
          renderDraft(draft)
        ) : (
          <div
            className="rounded-md border border-dashed border-stone-300 bg-stone-50 p-3 text-sm"
            aria-live="polite"
            data-testid="live-draft"
          >
            <p className="mb-1 text-xs text-stone-500">#{draft.seq} writing…</p>
            <p className="whitespace-pre-wrap">{draft.text.slice(-4000)}</p>
          </div>
        )
      ) : null}
    </div>
  )
}
