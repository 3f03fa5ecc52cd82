'use client'

import { DistributionBars } from '@/protocols/evince/ui/distribution'
import type { LivePreviewProps } from '@/components/protocols/types'
import { LivePreview } from '@/components/sessions/live-preview'
import { partialPredictions } from '@/protocols/evince/core/prompts'

/**
 * Keeps the debate page current and shows the answer being written (the distribution as far as it
 * has streamed, else the raw text, until the stored turn replaces it). Text only: model output is
 * never rendered as HTML.
 */
export function DebateLive(props: LivePreviewProps) {
  return (
    <LivePreview
      {...props}
      renderDraft={(draft) => {
        const predictions = partialPredictions(draft.text)
        return (
          <div
            className="rounded-md border border-dashed border-stone-300 bg-stone-50 p-3 text-xs"
            aria-live="polite"
            data-testid="debate-streaming"
          >
            <p className="mb-1 text-stone-500">Debater {draft.seat} is writing…</p>
            {predictions.length ? (
              <div className="w-72">
                <DistributionBars predictions={predictions} tone={draft.seat === 'B' ? 'b' : 'a'} />
              </div>
            ) : (
              <p className="whitespace-pre-wrap font-mono text-stone-700">{draft.text.slice(-1200)}</p>
            )}
          </div>
        )
      }}
    />
  )
}
