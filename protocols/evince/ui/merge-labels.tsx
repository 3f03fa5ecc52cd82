'use client'

import { mergeLabelsAction } from '@/protocols/evince/ui/actions'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'

/** Merge two labels for the results (accuracy, confusion) of a run, or clear the merges. */
export function MergeLabels({
  runId,
  merges,
  labels,
}: {
  runId: string
  merges: Record<string, string>
  labels: string[]
}) {
  const entries = Object.entries(merges)
  return (
    <div className="space-y-3">
      {entries.length ? (
        <ul className="text-sm" data-testid="label-merges">
          {entries.map(([from, into]) => (
            <li key={from}>
              {from} → <strong>{into}</strong>
            </li>
          ))}
        </ul>
      ) : (
        <p className="text-sm text-stone-500">No merges: labels count as written (after canonicalisation).</p>
      )}
      {labels.length ? (
        <datalist id="result-labels">
          {labels.map((l) => (
            <option key={l} value={l} />
          ))}
        </datalist>
      ) : null}
      <ActionForm action={mergeLabelsAction} className="flex flex-wrap items-end gap-3" resetOnSuccess>
        <input type="hidden" name="runId" value={runId} />
        <Field name="from" label="Count this label" placeholder="Obstructive Jaundice" />
        <Field name="into" label="as" placeholder="Jaundice" />
        <SubmitButton pendingText="Merging…">Merge</SubmitButton>
      </ActionForm>
      {entries.length ? (
        <ActionForm action={mergeLabelsAction}>
          <input type="hidden" name="runId" value={runId} />
          <input type="hidden" name="intent" value="clear" />
          <SubmitButton variant="secondary" pendingText="Clearing…">
            Clear merges
          </SubmitButton>
        </ActionForm>
      ) : null}
    </div>
  )
}
