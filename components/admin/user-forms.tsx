'use client'

import {
  createUserAction,
  issueResetLinkAction,
  setUserDisabledAction,
  setUserPasswordAction,
  updateUserRoleAction,
} from '@/app/actions/users'
import { type ReactNode, useState } from 'react'
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
 * A user's row of the Users table with its actions; **Reset password** opens the two ways to reset
 * in a row of its own under it, across the whole table (inside the actions cell they widened the
 * table past the page).
 */
export function UserRow({
  cells,
  actions,
  userId,
  email,
  columns,
}: {
  /** The row's cells before the actions cell. */
  cells: ReactNode
  /** Disable / Enable, or nothing for the admin's own row (no reset either). */
  actions: ReactNode
  userId: string
  email: string
  columns: number
}) {
  const [open, setOpen] = useState(false)
  const panel = `reset-${userId}`
  return (
    <>
      <tr>
        {cells}
        <td className="px-4 py-2 align-top">
          {actions && (
            <div className="space-y-2">
              {actions}
              <button
                type="button"
                aria-expanded={open}
                aria-controls={open ? panel : undefined}
                onClick={() => setOpen((o) => !o)}
                className="whitespace-nowrap text-sm text-stone-700 underline"
              >
                {open ? 'Close reset' : 'Reset password'}
              </button>
            </div>
          )}
        </td>
      </tr>
      {open && (
        <tr id={panel} data-testid={`reset-panel-${email}`}>
          <td colSpan={columns} className="bg-stone-50 px-4 py-3">
            <ResetPasswordForms userId={userId} email={email} />
          </td>
        </tr>
      )}
    </>
  )
}

/**
 * Password reset for someone else: set a new password now, or issue a one-time link (shown once)
 * that lets them choose one. Either way they are signed out everywhere and their API keys revoked.
 */
export function ResetPasswordForms({ userId, email }: { userId: string; email: string }) {
  return (
    <section aria-label={`Reset the password of ${email}`} className="grid max-w-4xl gap-4 text-sm md:grid-cols-2">
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
        <p className="text-stone-600">Or a one-time link they open to choose a password (valid 24 hours).</p>
        <SubmitButton variant="secondary" pendingText="Issuing…">
          Issue one-time reset link
        </SubmitButton>
      </ActionForm>
    </section>
  )
}
