'use client'

import {
  changePasswordAction,
  createApiKeyAction,
  revokeApiKeyAction,
  updateProfileAction,
} from '@/app/actions/account'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'

export function ProfileForm({ name }: { name: string }) {
  return (
    <ActionForm action={updateProfileAction}>
      <Field name="name" label="Name" defaultValue={name} required />
      <SubmitButton>Save</SubmitButton>
    </ActionForm>
  )
}

export function PasswordForm() {
  return (
    <ActionForm action={changePasswordAction} resetOnSuccess>
      <Field name="currentPassword" label="Current password" type="password" autoComplete="current-password" required />
      <Field
        name="newPassword"
        label="New password"
        type="password"
        autoComplete="new-password"
        hint="At least 8 characters and not easy to guess. Changing it signs out your other sessions and revokes your API keys."
        required
      />
      <SubmitButton pendingText="Changing…">Change password</SubmitButton>
    </ActionForm>
  )
}

export function CreateApiKeyForm() {
  return (
    <ActionForm
      action={createApiKeyAction}
      resetOnSuccess
      render={(state) =>
        typeof state.data?.key === 'string' ? (
          <div className="rounded-md border border-amber-200 bg-amber-50 p-3 text-sm">
            <p className="font-medium">Your new key (shown once):</p>
            <code data-testid="new-api-key" className="mt-1 block break-all font-mono text-xs">
              {state.data.key}
            </code>
          </div>
        ) : null
      }
    >
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Key name" placeholder="analysis notebook" required />
        <Field name="expiresInDays" label="Expires after (days)" type="number" hint="Leave empty for no expiry." />
      </div>
      <SubmitButton>Create API key</SubmitButton>
    </ActionForm>
  )
}

export function RevokeApiKeyForm({ keyId, name }: { keyId: string; name: string }) {
  return (
    <ActionForm action={revokeApiKeyAction}>
      <input type="hidden" name="keyId" value={keyId} />
      <button type="submit" className="text-xs text-red-700 underline" aria-label={`Revoke ${name}`}>
        Revoke
      </button>
    </ActionForm>
  )
}
