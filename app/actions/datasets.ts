'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { awaitDatasetImport, dismissDataset, importDataset } from '@/lib/server/services/datasets'

/** How long the form waits for an import to finish before it leaves the rest to the study page. */
const WAIT_MS = 8000

/**
 * The form's fields as the import reads them: blank fields and empty file inputs are absent; a
 * kind's further files (several may share a name, e.g. images) are lists. The kind decides which
 * of them it reads.
 */
function importFields(fd: FormData): Record<string, unknown> {
  const raw: Record<string, unknown> = {}
  for (const key of new Set(fd.keys())) {
    if (key.startsWith('$ACTION')) continue // Next's own fields of a server action's form
    const values = fd.getAll(key).filter((v) => (v instanceof File ? v.size > 0 : v.trim() !== ''))
    if (!values.length) continue
    raw[key] = key === 'file' || !(values[0] instanceof File) ? values[0] : values
  }
  return raw
}

export async function importDatasetAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const raw = importFields(fd)
  const started = await runFormAction(importDataset, raw, 'Import started.')
  if (!started.data) return started.state
  const datasetId = started.data.id
  revalidatePath(`/studies/${raw.studyId}`)
  // The import runs as a job; most files are done within a few seconds, so wait for the outcome
  // (waiting costs this request nothing but an open connection) and say what happened.
  const { state, data } = await runFormAction(awaitDatasetImport, { datasetId, waitMs: WAIT_MS }, (d) =>
    d.status === 'ready'
      ? `Imported ${d.instances} instances${d.assets ? ` and ${d.assets} images` : ''}.`
      : `Importing in the background (${d.rowsTotal === null ? `${d.rowsDone} rows checked` : `${d.rowsDone} of ${d.rowsTotal} rows stored`}); the study page shows its progress.`,
  )
  // A failed import's reason is shown here, with the form still filled in: nothing is left behind.
  if (!data) await runFormAction(dismissDataset, { datasetId }, '')
  return state
}

export async function dismissDatasetAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(dismissDataset, { datasetId: fd.get('datasetId') || undefined }, 'Dismissed.')
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}
