'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { clembenchExperiments, importClembench } from '@/protocols/scorekeeping/server/import'
import { awaitDatasetImport, dismissDataset } from '@/lib/server/services/datasets'

/** How long the form waits for the import to finish before it leaves the rest to the study page. */
const WAIT_MS = 8000

/**
 * Import clembench's game folder (or an instances file with its resources), or generate instances:
 * the import job runs it (as every dataset import); the form waits a few seconds for the outcome and
 * says what happened, and a failed import's reason is shown here with nothing left behind.
 */
export async function importClembenchAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const file = fd.get('file')
  const resources = fd.get('resources')
  const text = (k: string) => {
    const v = fd.get(k)
    return typeof v === 'string' && v.trim() ? v.trim() : undefined
  }
  const studyId = text('studyId')
  const started = await runFormAction(
    importClembench,
    {
      studyId,
      name: text('name'),
      mode: text('mode'),
      file: file instanceof File && file.size > 0 ? file : undefined,
      resources: resources instanceof File && resources.size > 0 ? resources : undefined,
      instancesFile: text('instancesFile'),
      experiment: text('experiment'),
      count: text('count'),
      seed: text('seed'),
    },
    'Import started.',
  )
  if (!started.data) return started.state
  const datasetId = started.data.id
  if (studyId) revalidatePath(`/studies/${studyId}`)
  const { state, data } = await runFormAction(awaitDatasetImport, { datasetId, waitMs: WAIT_MS }, (d) =>
    d.status === 'ready'
      ? `Imported ${d.instances} game instance(s).`
      : `Importing in the background (${d.rowsDone} instances so far); the study page shows its progress.`,
  )
  if (!data) {
    await runFormAction(dismissDataset, { datasetId }, '')
    return state
  }
  // Ready: name the experiments it holds (read after the outcome, which the read above checked access for).
  if (data.status === 'ready')
    return {
      ok: true,
      message: `Imported ${data.instances} game instance(s) of ${(await clembenchExperiments(datasetId)).join(', ')}.`,
    }
  return state
}
