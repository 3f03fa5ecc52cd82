'use client'

import {
  addMemberAction,
  archiveStudyAction,
  assignSeatsAction,
  createStudyAction,
  removeMemberAction,
  setMemberRoleAction,
  updateStudyAction,
} from '@/app/actions/studies'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'

const protocolOptions = (labels: Record<string, string>) => [
  { value: '', label: 'Choose later' },
  ...Object.entries(labels).map(([value, label]) => ({ value, label })),
]

export function CreateStudyForm({ protocols }: { protocols: Record<string, string> }) {
  return (
    <ActionForm action={createStudyAction}>
      <Field name="name" label="Name" required maxLength={120} />
      <Field name="description" label="Description" multiline hint="What the study is for; shown to its members." />
      <SelectField
        name="protocol"
        label="Protocol"
        options={protocolOptions(protocols)}
        hint="You can choose or change this later."
      />
      <Field name="guidelines" label="Guidelines for experts and annotators" multiline />
      <SubmitButton pendingText="Creating…">Create study</SubmitButton>
    </ActionForm>
  )
}

export function EditStudyForm({
  study,
  protocols,
}: {
  study: { id: string; name: string; description: string; guidelines: string; protocol: string | null }
  protocols: Record<string, string>
}) {
  return (
    <ActionForm action={updateStudyAction}>
      <input type="hidden" name="studyId" value={study.id} />
      <Field name="name" label="Name" defaultValue={study.name} required />
      <Field name="description" label="Description" defaultValue={study.description} multiline />
      <SelectField
        name="protocol"
        label="Protocol"
        options={protocolOptions(protocols)}
        defaultValue={study.protocol ?? ''}
      />
      <Field name="guidelines" label="Guidelines" defaultValue={study.guidelines} multiline />
      <SubmitButton>Save changes</SubmitButton>
    </ActionForm>
  )
}

export function ArchiveStudyForm({ studyId, archived }: { studyId: string; archived: boolean }) {
  return (
    <ActionForm action={archiveStudyAction}>
      <input type="hidden" name="studyId" value={studyId} />
      <input type="hidden" name="archived" value={archived ? 'false' : 'true'} />
      <SubmitButton variant={archived ? 'secondary' : 'danger'}>
        {archived ? 'Restore study' : 'Archive study'}
      </SubmitButton>
    </ActionForm>
  )
}

export function AddMemberForm({ studyId, roles }: { studyId: string; roles: Array<{ value: string; label: string }> }) {
  return (
    <ActionForm
      action={addMemberAction}
      resetOnSuccess
      className="grid gap-3 sm:grid-cols-[1fr_12rem_auto] sm:items-end sm:space-y-0"
    >
      <input type="hidden" name="studyId" value={studyId} />
      <Field name="email" label="Member's email" type="email" required />
      <SelectField
        name="role"
        label="Role in this study"
        options={[{ value: '', label: 'Their account role' }, ...roles]}
      />
      <SubmitButton>Add member</SubmitButton>
    </ActionForm>
  )
}

export function RemoveMemberForm({ studyId, userId, email }: { studyId: string; userId: string; email: string }) {
  return (
    <ActionForm action={removeMemberAction}>
      <input type="hidden" name="studyId" value={studyId} />
      <input type="hidden" name="userId" value={userId} />
      <button type="submit" className="text-xs text-red-700 underline" aria-label={`Remove ${email}`}>
        Remove
      </button>
    </ActionForm>
  )
}

/** A member's study role, changed in place (study admins only; the server checks it). */
export function MemberRoleForm({
  studyId,
  userId,
  email,
  role,
  roles,
}: {
  studyId: string
  userId: string
  email: string
  role: string
  roles: Array<{ value: string; label: string }>
}) {
  return (
    <ActionForm action={setMemberRoleAction} className="flex flex-wrap items-center justify-end gap-2 space-y-0">
      <input type="hidden" name="studyId" value={studyId} />
      <input type="hidden" name="userId" value={userId} />
      <select
        name="role"
        defaultValue={role}
        aria-label={`Study role of ${email}`}
        className="rounded-md border border-stone-300 bg-white px-2 py-1 text-xs"
      >
        {roles.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>
      <button
        type="submit"
        className="text-xs text-brand-700 underline"
        aria-label={`Change the study role of ${email}`}
      >
        Change
      </button>
    </ActionForm>
  )
}

/**
 * Name a member on free claimable seats of a run (`sessions.assign`): which run and seat, who, and on
 * how many of its open sessions; they then appear in that person's work queue.
 */
export function AssignSeatsForm({
  studyId,
  slots,
  members,
}: {
  studyId: string
  /** `runId/seat`, and a label naming the run, the seat and how many are free. */
  slots: Array<{ value: string; label: string }>
  members: Array<{ value: string; label: string }>
}) {
  return (
    <ActionForm action={assignSeatsAction} resetOnSuccess>
      <input type="hidden" name="studyId" value={studyId} />
      <div className="grid gap-3 sm:grid-cols-3">
        <SelectField name="slot" label="Run and seat" options={slots} />
        <SelectField name="userId" label="Assign to" options={members} />
        <Field name="count" label="Sessions" type="number" defaultValue="1" required />
      </div>
      <SubmitButton>Assign</SubmitButton>
    </ActionForm>
  )
}
