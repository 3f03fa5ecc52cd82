'use server'

import { z } from 'zod'
import type { ActionState } from '@/lib/action-state'
import { AppError } from '@/lib/server/errors'
import { formDataToObject } from '@/lib/server/form-data'
import { inputProblem } from '@/lib/server/input'
import { failureState } from '@/lib/server/form-action'
import { validationFailure } from '@/lib/server/operation'
import { resetPasswordWithLink } from '@/lib/server/services/users'

/** A signed-out person spends their one-time link (the token is the only credential). */
export async function resetPasswordAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const raw = formDataToObject(fd)
  const problem = inputProblem(raw)
  if (problem) return { ok: false, error: problem.message }
  try {
    const r = await resetPasswordWithLink(raw)
    return { ok: true, message: `Password changed for ${r.email}. Sign in with it now.` }
  } catch (e) {
    if (e instanceof z.ZodError) {
      return failureState(validationFailure(e))
    }
    if (e instanceof AppError) return failureState({ error: e.message, fieldErrors: e.fieldErrors })
    throw e
  }
}
