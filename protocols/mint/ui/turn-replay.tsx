'use client'

import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from 'react'

/**
 * The episode's turns with a step-through replay: "Replay turn by turn" shows the first turn only, then
 * Next / Previous (or → / ← on the bar, Home / End) one turn at a time, as the episode unfolded;
 * "Show all" returns to the whole list. The turns themselves are rendered by the server (`turns`, one
 * list item each); a live episode's new turns join the list as they arrive. The buttons at an end are
 * aria-disabled rather than disabled, so the focus stays on the bar and the keys keep working.
 */
export function TurnReplay({ turns }: { turns: ReactNode[] }) {
  const [at, setAt] = useState<number | null>(null)
  const next = useRef<HTMLButtonElement>(null)
  const replaying = at !== null
  useEffect(() => {
    if (replaying) next.current?.focus()
  }, [replaying])
  const n = turns.length
  const shown = at === null ? n : Math.min(at, n)
  const go = (to: number) => setAt(Math.max(1, Math.min(n, to)))
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const to = { ArrowRight: shown + 1, ArrowLeft: shown - 1, Home: 1, End: n }[e.key]
    if (to === undefined) return
    e.preventDefault()
    go(to)
  }
  return (
    <div className="space-y-2">
      {n > 1 ? (
        <div
          role="toolbar"
          aria-label="Replay"
          className="flex flex-wrap items-center gap-2 text-sm"
          onKeyDown={at === null ? undefined : onKey}
        >
          {at === null ? (
            <button type="button" className="rounded border border-stone-300 px-2 py-1" onClick={() => setAt(1)}>
              Replay turn by turn
            </button>
          ) : (
            <>
              <button
                type="button"
                className="rounded border border-stone-300 px-2 py-1 aria-disabled:opacity-50"
                onClick={() => go(shown - 1)}
                aria-disabled={shown <= 1}
                aria-keyshortcuts="ArrowLeft"
              >
                ← Previous
              </button>
              <button
                ref={next}
                type="button"
                className="rounded border border-stone-300 px-2 py-1 aria-disabled:opacity-50"
                onClick={() => go(shown + 1)}
                aria-disabled={shown >= n}
                aria-keyshortcuts="ArrowRight"
              >
                Next →
              </button>
              <span aria-live="polite" data-testid="mint-replay-position">
                Turn {shown} of {n}
              </span>
              <button type="button" className="rounded px-2 py-1 text-brand-700 underline" onClick={() => setAt(null)}>
                Show all
              </button>
            </>
          )}
        </div>
      ) : null}
      <ol className="space-y-3" aria-label="Turns">
        {turns.slice(0, shown)}
      </ol>
    </div>
  )
}
