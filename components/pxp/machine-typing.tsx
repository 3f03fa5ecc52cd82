'use client'

import { useState } from 'react'
import { type LiveEvent, useLive } from '@/components/live/use-live'

/**
 * Keeps the session page current (new messages, status) and shows the partner model's answer as it
 * streams in, until the stored message replaces it. Text only: model output is never HTML here.
 */
export function MachineTyping({ sessionId, lastSeq }: { sessionId: string; lastSeq: number }) {
  const [draft, setDraft] = useState<{ seq: number; text: string } | null>(null)
  useLive(`session:${sessionId}`, {
    onEvent: (e: LiveEvent) => {
      if (e.type === 'delta') setDraft({ seq: e.seq, text: e.text })
      else if (e.type === 'message') setDraft(null)
    },
  })
  if (!draft || draft.seq <= lastSeq) return null
  return (
    <div
      className="mt-3 rounded-md border border-dashed border-stone-300 bg-stone-50 p-3 text-sm"
      aria-live="polite"
      data-testid="machine-streaming"
    >
      <p className="mb-1 text-xs text-stone-500">#{draft.seq} writing…</p>
      <p className="whitespace-pre-wrap">{draft.text}</p>
    </div>
  )
}
