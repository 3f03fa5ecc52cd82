'use server'

import { headers } from 'next/headers'
import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import { z } from 'zod'
import type { ActionState } from '@/lib/action-state'
import { safeNext } from '@/lib/safe-next'
import { getAuth } from '@/lib/server/auth/auth'
import { signInWithPassword } from '@/lib/server/auth/sign-in'
import { failureState, runFormAction } from '@/lib/server/form-action'
import { formDataToObject } from '@/lib/server/form-data'
import { validationFailure } from '@/lib/server/operation'
import { createApiKey, revokeApiKey } from '@/lib/server/services/api-keys'
import { changePassword, email, updateProfile } from '@/lib/server/services/users'

const SignInInput = z.object({
  email,
  password: z.string({ error: 'Enter your password.' }).min(1, 'Enter your password.').max(128),
  next: z.string().max(2000).optional(),
})

export async function signInAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const parsed = SignInInput.safeParse(formDataToObject(fd))
  if (!parsed.success) {
    return failureState(validationFailure(parsed.error))
  }
  const result = await signInWithPassword(parsed.data, await headers())
  if (!result.ok) return { ok: false, error: result.error }
  redirect(safeNext(parsed.data.next))
}

export async function signOutAction(): Promise<void> {
  try {
    await getAuth().api.signOut({ headers: await headers() })
  } catch {
    // Already signed out (expired or revoked session): nothing to end.
  }
  redirect('/sign-in')
}

export async function updateProfileAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(updateProfile, fd, 'Profile saved.')
  if (state?.ok) revalidatePath('/', 'layout')
  return state
}

export async function changePasswordAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(changePassword, fd, (r) =>
    r.revokedApiKeys
      ? `Password changed. Your other sessions were signed out and your ${r.revokedApiKeys === 1 ? 'API key was' : `${r.revokedApiKeys} API keys were`} revoked: create new ones for your scripts.`
      : 'Password changed. Your other sessions were signed out.',
  )
  if (state?.ok) revalidatePath('/settings')
  return state
}

export async function createApiKeyAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(createApiKey, fd, 'API key created. Copy it now: it is shown only once.')
  if (!data || !state) return state
  revalidatePath('/settings')
  return { ...state, data: { key: data.key } }
}

export async function revokeApiKeyAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(revokeApiKey, fd, 'API key revoked.')
  if (state?.ok) revalidatePath('/settings')
  return state
}
