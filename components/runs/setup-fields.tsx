/**
 * The fields every protocol's set-up form carries: the study, the protocol (the generic create
 * action looks its plugin up by it), and whether to start at once or keep the run as a draft.
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
    <label className="flex items-center gap-2 text-sm">
      <input type="checkbox" name="draft" /> Create as a draft (start it later from the run page)
    </label>
  )
}
