import { headers } from 'next/headers'
import type { ActionState } from '@/lib/action-state'
import { getCurrentSession } from '@/lib/server/auth/session'
import { formDataToObject } from '@/lib/server/form-data'
import { execute, type Failure, type Operation } from '@/lib/server/operation'

/**
 * The one path every form's server action takes: session → operation (zod + scope + audit) → state.
 * Actions are public HTTP endpoints in Next, so nothing here trusts the page that rendered the form.
 */
export async function runFormAction<I, O>(
  op: Operation<I, O>,
  input: FormData | Record<string, unknown>,
  message: string | ((data: O) => string),
): Promise<{ state: ActionState; data?: O }> {
  const session = await getCurrentSession()
  const raw = input instanceof FormData ? formDataToObject(input) : input
  const result = await execute(op, session?.actor ?? null, raw, {
    headers: await headers(),
    sessionId: session?.sessionId,
  })
  if (!result.ok) return { state: failureState(result) }
  return {
    state: { ok: true, message: typeof message === 'function' ? message(result.data) : message },
    data: result.data,
  }
}

/** A failed operation as a form's state: the message, the field errors, and whether it only sums them up. */
export function failureState(f: Pick<Failure, 'error' | 'fieldErrors' | 'fieldsOnly'>): ActionState {
  return {
    ok: false,
    error: f.error,
    ...(f.fieldErrors ? { fieldErrors: f.fieldErrors } : {}),
    ...(f.fieldsOnly ? { fieldsOnly: true } : {}),
  }
}
