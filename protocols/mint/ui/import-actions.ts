'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { importResults } from '@/protocols/mint/server/released-import'

/**
 * The leaderboard's import form: the study, the archive (.zip / .tar.gz of the authors' results tree)
 * and, optionally, the model's name. `mint.import-results` checks the scope, the study write access and
 * every line; nothing is stored unless every line is.
 */
export async function importMintResultsAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const raw: Record<string, unknown> = {}
  for (const [key, v] of fd.entries()) {
    if (key.startsWith('$ACTION')) continue
    if (v instanceof File ? v.size > 0 : v.trim() !== '') raw[key] = v
  }
  const { state, data } = await runFormAction(
    importResults,
    raw,
    (d) =>
      `Imported ${d.records} record${d.records === 1 ? '' : 's'} in ${d.files} results file${d.files === 1 ? '' : 's'} (${d.runs} run${d.runs === 1 ? '' : 's'} of ${d.models.join(', ')})${d.replaced ? `, replacing ${d.replaced} file${d.replaced === 1 ? '' : 's'} imported before` : ''}.`,
  )
  if (data && typeof raw.studyId === 'string') revalidatePath(`/studies/${raw.studyId}/p/mint/leaderboard`)
  return state
}
