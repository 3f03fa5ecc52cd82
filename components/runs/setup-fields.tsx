import { Field } from '@/components/forms/action-form'

/**
 * The fields every protocol's set-up form carries: the study, the protocol (the generic create
 * action looks its plugin up by it), how many sessions may run at once, how claimable seats are
 * claimed and offered, and whether to start at once or keep the run as a draft.
 */
export function SetupHiddenFields({ studyId, protocol }: { studyId: string; protocol: string }) {
  return (
    <>
      <input type="hidden" name="studyId" value={studyId} />
      <input type="hidden" name="protocol" value={protocol} />
    </>
  )
}

export function DraftField() {
  return (
    <>
      <Field
        name="maxInFlight"
        label="Sessions at once"
        type="number"
        placeholder="No limit"
        hint="Optional: at most this many of the run's sessions on the workers at once; the others wait their turn. A person's turn never waits for it."
      />
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" name="distinctClaimants" /> One person per item: a member never claims two sessions of
        the same instance
      </label>
      <Field
        name="fillFirst"
        label="Complete items to N first"
        type="number"
        placeholder="No preference"
        hint="Optional: the work queue offers claimable seats of items with fewer than N finished sessions first."
      />
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" name="draft" /> Create as a draft (start it later from the run page)
      </label>
    </>
  )
}
