'use server'

import { revalidatePath } from 'next/cache'
import { headers } from 'next/headers'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import {
  createUser,
  issueResetLink,
  setUserDisabled,
  setUserPassword,
  updateUserRole,
} from '@/lib/server/services/users'

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

export async function setUserPasswordAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(
    setUserPassword,
    fd,
    (r) =>
      `New password set for ${r.email}. They were signed out everywhere (${r.signedOutSessions} session${r.signedOutSessions === 1 ? '' : 's'})${r.revokedApiKeys ? ` and their ${r.revokedApiKeys} API key${r.revokedApiKeys === 1 ? ' was' : 's were'} revoked` : ''}.`,
  )
  if (state?.ok) revalidatePath('/admin/users')
  return state
}

/** The address people open Parley at: BETTER_AUTH_URL, else the host this request came to. */
async function publicOrigin(): Promise<string> {
  if (process.env.BETTER_AUTH_URL) return process.env.BETTER_AUTH_URL.replace(/\/+$/, '')
  const h = await headers()
  const proto = h.get('x-forwarded-proto')?.split(',')[0]?.trim() || 'http'
  return `${proto}://${h.get('x-forwarded-host')?.split(',')[0]?.trim() || h.get('host') || '127.0.0.1:3000'}`
}

export async function issueResetLinkAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(
    issueResetLink,
    fd,
    (r) =>
      `One-time reset link for ${r.email}, valid until ${r.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC. Send it privately; it is shown only now.`,
  )
  if (!data || !state) return state
  return { ...state, data: { link: `${await publicOrigin()}${data.path}` } }
}
