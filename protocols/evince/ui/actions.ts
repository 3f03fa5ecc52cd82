'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { mergeDebateLabels } from '@/protocols/evince/server/operations'

const text = (fd: FormData, k: string) => {
  const v = fd.get(k)
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}

/** Merge two labels for a debate run's results, or clear the merges (`intent` = clear). */
export async function mergeLabelsAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const runId = text(fd, 'runId')
  const raw =
    text(fd, 'intent') === 'clear' ? { runId, clear: true } : { runId, from: text(fd, 'from'), into: text(fd, 'into') }
  const { state } = await runFormAction(mergeDebateLabels, raw, 'The results now count the merged labels as one.')
  if (state?.ok) revalidatePath(`/runs/${runId}`)
  return state
}
