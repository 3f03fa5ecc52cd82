'use client'

import { useLive } from '@/components/live/use-live'

/**
 * An import in progress: rows checked (while the file is being checked), then rows stored out of
 * the total, kept current through the dataset's live topic (polling while the stream is down).
 */
export function ImportProgress({
  datasetId,
  rowsDone,
  rowsTotal,
}: {
  datasetId: string
  rowsDone: number
  rowsTotal: number | null
}) {
  useLive(`dataset:${datasetId}`, { fallbackMs: 2000 })
  const pct = rowsTotal ? Math.min(100, Math.round((100 * rowsDone) / rowsTotal)) : 0
  return (
    <span className="flex items-center gap-2" data-testid="import-progress">
      <span
        role="progressbar"
        aria-label="Import progress"
        aria-valuemin={0}
        aria-valuemax={rowsTotal ?? undefined}
        aria-valuenow={rowsTotal === null ? undefined : rowsDone}
        className="h-2 w-24 overflow-hidden rounded-full bg-stone-100"
      >
        <span className="block h-full bg-brand-600 transition-all" style={{ width: `${pct}%` }} />
      </span>
      <span className="text-xs text-stone-500">
        {rowsTotal === null
          ? `checking rows… ${rowsDone.toLocaleString('en')} checked`
          : `storing ${rowsDone.toLocaleString('en')} / ${rowsTotal.toLocaleString('en')} rows (${pct} %)`}
      </span>
    </span>
  )
}
