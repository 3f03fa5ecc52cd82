'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { completeWork } from '@/lib/server/services/work'

export async function completeWorkAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(completeWork, fd, 'Marked done. Thank you!')
  if (state?.ok) {
    revalidatePath('/work')
    revalidatePath(`/work/${fd.get('workId')}`)
  }
  return state
}
