'use server'

import { revalidatePath } from 'next/cache'
import { runFormAction } from '@/lib/server/form-action'
import { importSessions } from '@/protocols/labelling/server/session-import'

export type SessionImportAnswer =
  | { ok: true; datasetId: string; items: number }
  | { ok: false; error: string; fieldErrors?: Record<string, string[]> }

/**
 * "Import" on the session-import page: the picked sessions as one transcript dataset through
 * `labelling.import-sessions` (checked there: study write, sessions of this study, all or nothing).
 */
export async function importPickedSessions(raw: {
  studyId: string
  name: string
  sessionIds: string[]
}): Promise<SessionImportAnswer> {
  const { state, data } = await runFormAction(importSessions, raw, (d) => `Imported ${d.items} sessions.`)
  if (!data)
    return {
      ok: false,
      error: state?.error ?? 'Refused.',
      ...(state?.fieldErrors ? { fieldErrors: state.fieldErrors } : {}),
    }
  revalidatePath(`/studies/${raw.studyId}`)
  return { ok: true, datasetId: data.datasetId, items: data.items }
}
