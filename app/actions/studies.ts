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
import { assignSeats } from '@/lib/server/services/sessions'
import { formDataToObject } from '@/lib/server/form-data'

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

/** The form names run and seat in one choice (`runId/seat`); the operation takes them apart. */
export async function assignSeatsAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { slot, ...rest } = formDataToObject(fd)
  const [runId, ...seat] = typeof slot === 'string' && slot ? slot.split('/') : []
  const { state } = await runFormAction(assignSeats, { ...rest, runId, seat: seat.join('/') || undefined }, (r) =>
    r.sessionIds.length === r.requested
      ? `Assigned ${r.email} to ${r.sessionIds.length} session${r.sessionIds.length === 1 ? '' : 's'}.`
      : `Assigned ${r.email} to ${r.sessionIds.length} of the ${r.requested} sessions asked: no more had the seat free for them.`,
  )
  if (state?.ok) revalidatePath(`/studies/${fd.get('studyId')}`)
  return state
}
