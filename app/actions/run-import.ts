'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { importRun } from '@/lib/server/services/session-import'

/**
 * The import-trajectories form: the study, the run's name, the kind, the file and the kind's own fields
 * (blank fields are left out, so the kind's defaults apply). Nothing is stored unless every line is.
 */
export async function importRunAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const raw: Record<string, unknown> = {}
  for (const [key, v] of fd.entries()) {
    if (key.startsWith('$ACTION')) continue
    if (v instanceof File ? v.size > 0 : v.trim() !== '') raw[key] = v
  }
  const { state, data } = await runFormAction(
    importRun,
    raw,
    (d) => `Imported ${d.sessions} session${d.sessions === 1 ? '' : 's'} (${d.messages} messages) as a run.`,
  )
  if (data) {
    revalidatePath('/runs')
    revalidatePath(`/studies/${raw.studyId}`)
    return { ...state, ok: true, data: { runId: data.runId } }
  }
  return state
}
