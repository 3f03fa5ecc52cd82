'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import {
  addMember,
  archiveStudy,
  createStudy,
  removeMember,
  setMemberRole,
  updateStudy,
} from '@/lib/server/services/studies'
import { assignWork } from '@/lib/server/services/work'

export async function createStudyAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(createStudy, fd, 'Study created.')
  if (!data) return state
  revalidatePath('/studies')
  redirect(`/studies/${data.id}`)
}

export async function updateStudyAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(updateStudy, fd, 'Saved.')
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}

export async function archiveStudyAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(archiveStudy, fd, (s) => (s.archivedAt ? 'Study archived.' : 'Study restored.'))
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}

export async function addMemberAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(addMember, fd, 'Member added.')
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}

export async function removeMemberAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(removeMember, fd, 'Member removed.')
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}

export async function setMemberRoleAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(setMemberRole, fd, (r) =>
    r.changed ? `${r.email} is now ${r.label.toLowerCase()} in this study.` : `${r.email} already has that role.`,
  )
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}

export async function assignWorkAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(assignWork, fd, (w) => `Assigned “${w.title}” to ${w.user.email}.`)
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}
