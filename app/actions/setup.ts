'use server'

import { headers } from 'next/headers'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { getAuth } from '@/lib/server/auth/auth'
import { withClientAddress } from '@/lib/server/auth/client-address'
import { createFirstAdmin, FirstAdminInput } from '@/lib/server/bootstrap'
import { formDataToObject } from '@/lib/server/form-data'
import { failureState } from '@/lib/server/form-action'
import { validationFailure } from '@/lib/server/operation'

export async function setupAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const parsed = FirstAdminInput.safeParse(formDataToObject(fd))
  if (!parsed.success) {
    return failureState(validationFailure(parsed.error))
  }
  const user = await createFirstAdmin(parsed.data, 'setup-page')
  if (!user) return { ok: false, error: 'Parley already has an admin. Sign in instead.' }
  await getAuth().api.signInEmail({
    body: { email: parsed.data.email, password: parsed.data.password },
    headers: withClientAddress(await headers()),
  })
  redirect('/')
}
