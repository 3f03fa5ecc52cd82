'use client'

import {
  createUserAction,
  issueResetLinkAction,
  setUserDisabledAction,
  setUserPasswordAction,
  updateUserRoleAction,
} from '@/app/actions/users'
import { ActionForm, Field, SelectField, SubmitButton } from '@/components/forms/action-form'

type Opt = Array<{ value: string; label: string }>

export function CreateUserForm({ roles }: { roles: Opt }) {
  return (
    <ActionForm action={createUserAction} resetOnSuccess>
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Name" required />
        <Field name="email" label="Email" type="email" required />
        <SelectField name="role" label="Role" options={roles} defaultValue="expert" />
        <Field
          name="password"
          label="Initial password"
          type="password"
          autoComplete="new-password"
          hint="At least 8 characters and not easy to guess (a few unrelated words work well); share it privately."
          required
        />
      </div>
      <SubmitButton pendingText="Creating…">Create user</SubmitButton>
    </ActionForm>
  )
}

export function RoleForm({ userId, role, roles, email }: { userId: string; role: string; roles: Opt; email: string }) {
  return (
    <ActionForm action={updateUserRoleAction} className="flex items-center gap-2 space-y-0">
      <input type="hidden" name="userId" value={userId} />
      <label className="sr-only" htmlFor={`role-${userId}`}>
        Role of {email}
      </label>
      <select
        id={`role-${userId}`}
        name="role"
        defaultValue={role}
        className="rounded border border-stone-300 bg-white px-2 py-1 text-sm"
      >
        {roles.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>
      <SubmitButton variant="secondary">Save</SubmitButton>
    </ActionForm>
  )
}

export function DisableForm({ userId, disabled }: { userId: string; disabled: boolean }) {
  return (
    <ActionForm action={setUserDisabledAction}>
      <input type="hidden" name="userId" value={userId} />
      <input type="hidden" name="disabled" value={disabled ? 'false' : 'true'} />
      <SubmitButton variant={disabled ? 'secondary' : 'danger'}>{disabled ? 'Enable' : 'Disable'}</SubmitButton>
    </ActionForm>
  )
}

/**
 * Password reset for someone else: set a new password now, or issue a one-time link (shown once)
 * that lets them choose one. Either way they are signed out everywhere and their API keys revoked.
 */
export function ResetPasswordForms({ userId, email }: { userId: string; email: string }) {
  return (
    <details className="text-sm">
      <summary className="cursor-pointer text-stone-700 underline">Reset password</summary>
      <div className="mt-2 w-72 space-y-4 rounded-md border border-stone-200 bg-stone-50 p-3">
        <ActionForm action={setUserPasswordAction} resetOnSuccess>
          <input type="hidden" name="userId" value={userId} />
          <Field
            name="password"
            label={`New password for ${email}`}
            type="password"
            autoComplete="new-password"
            hint="Signs them out everywhere and revokes their API keys."
            required
          />
          <SubmitButton variant="secondary" pendingText="Setting…">
            Set password
          </SubmitButton>
        </ActionForm>
        <ActionForm
          action={issueResetLinkAction}
          render={(state) =>
            typeof state.data?.link === 'string' ? (
              <code data-testid="reset-link" className="block break-all rounded bg-white p-2 font-mono text-xs">
                {state.data.link}
              </code>
            ) : null
          }
        >
          <input type="hidden" name="userId" value={userId} />
          <SubmitButton variant="secondary" pendingText="Issuing…">
            Issue one-time reset link
          </SubmitButton>
        </ActionForm>
      </div>
    </details>
  )
}
