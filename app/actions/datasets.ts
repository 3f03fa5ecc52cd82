'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { importDataset } from '@/lib/server/services/datasets'

export async function importDatasetAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  // Files arrive as File objects; several image files (or zips) share the name "images".
  const images = fd.getAll('images').filter((f): f is File => f instanceof File && f.size > 0)
  const raw = {
    studyId: fd.get('studyId') || undefined,
    name: fd.get('name') || undefined,
    kind: fd.get('kind') || undefined,
    file: fd.get('file') instanceof File && (fd.get('file') as File).size > 0 ? fd.get('file') : undefined,
    images,
    mapping: fd.get('mapping') || undefined,
  }
  const { state } = await runFormAction(
    importDataset,
    raw,
    (d) => `Imported ${d.instances} instances${d.assets ? ` and ${d.assets} images` : ''}.`,
  )
  if (state?.ok) revalidatePath(`/studies/${raw.studyId}`)
  return state
}
