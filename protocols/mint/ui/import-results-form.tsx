'use client'

import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'
import type { ActionState } from '@/lib/action-state'
import { uploadTooLargeMessage } from '@/lib/limits.mjs'
import { importMintResultsAction } from '@/protocols/mint/ui/import-actions'

const MB = 1024 * 1024

/**
 * Import the authors' released results (github.com/xingyaoww/mint-bench data/outputs/<model>) as a .zip
 * or .tar.gz, so their runs sit beside Parley's on the leaderboard. Every line is checked first; a bad
 * path or record is named and nothing is stored.
 */
export function ImportResultsForm({ studyId, maxUploadMb }: { studyId: string; maxUploadMb: number }) {
  const action = async (prev: ActionState, fd: FormData): Promise<ActionState> => {
    const file = fd.get('file')
    if (file instanceof File && file.size > maxUploadMb * MB)
      return { ok: false, error: uploadTooLargeMessage(file.size, maxUploadMb) }
    try {
      return await importMintResultsAction(prev, fd)
    } catch {
      return {
        ok: false,
        error: `The server did not take the upload (at most ${maxUploadMb} MB). Nothing was imported; check the file and your connection, then try again.`,
      }
    }
  }
  return (
    <ActionForm action={action} resetOnSuccess>
      <input type="hidden" name="studyId" value={studyId} />
      <div>
        <label className="block text-sm font-medium text-stone-800" htmlFor="mint-results-file">
          Results tree (.zip or .tar.gz)
        </label>
        <input
          id="mint-results-file"
          name="file"
          type="file"
          accept=".zip,.tar.gz,.tgz,application/zip,application/gzip"
          className="mt-1 block text-sm"
        />
      </div>
      <Field
        name="model"
        label="Model (only when the archive holds the model folder’s contents, F=… at its top)"
        placeholder="gpt-3.5-turbo-0613"
      />
      <p className="text-xs text-stone-500">
        Expected inside:
        &lt;model&gt;/F=&lt;feedback|None&gt;/[PHF=…/]max&lt;k&gt;_p&lt;p&gt;+tool+cd/&lt;category&gt;/&lt;dataset&gt;/results.jsonl.
        Only each record’s outcome is kept (success, action counts, terminate reason, tokens). A results file imported
        before under the same path is replaced. Up to {maxUploadMb} MB.
      </p>
      <SubmitButton pendingText="Checking every record…">Import released results</SubmitButton>
    </ActionForm>
  )
}
