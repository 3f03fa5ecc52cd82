'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { importClembench } from '@/lib/server/protocols/scorekeeping/import'

/** Import clembench's game folder (or an instances file with its resources), or generate instances. */
export async function importClembenchAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const file = fd.get('file')
  const resources = fd.get('resources')
  const text = (k: string) => {
    const v = fd.get(k)
    return typeof v === 'string' && v.trim() ? v.trim() : undefined
  }
  const { state } = await runFormAction(
    importClembench,
    {
      studyId: text('studyId'),
      name: text('name'),
      mode: text('mode'),
      file: file instanceof File && file.size > 0 ? file : undefined,
      resources: resources instanceof File && resources.size > 0 ? resources : undefined,
      instancesFile: text('instancesFile'),
      experiment: text('experiment'),
      count: text('count'),
      seed: text('seed'),
    },
    (d) => `Imported ${d.instances} game instance(s) of ${d.experiments.join(', ')}.`,
  )
  const studyId = text('studyId')
  if (state?.ok && studyId) revalidatePath(`/studies/${studyId}`)
  return state
}
