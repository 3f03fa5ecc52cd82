'use server'

import { revalidatePath } from 'next/cache'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { createUser, setUserDisabled, updateUserRole } from '@/lib/server/services/users'

export async function createUserAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(createUser, fd, (u) => `Created ${u.email} (${u.role}). They can sign in now.`)
  if (state?.ok) revalidatePath('/admin/users')
  return state
}

export async function updateUserRoleAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(updateUserRole, fd, (u) => `${u.email} is now ${u.role}.`)
  if (state?.ok) revalidatePath('/admin/users')
  return state
}

export async function setUserDisabledAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(
    setUserDisabled,
    fd,
    (u) => `${u.email} ${u.disabled ? 'disabled' : 'enabled'}.`,
  )
  if (state?.ok) revalidatePath('/admin/users')
  return state
}
