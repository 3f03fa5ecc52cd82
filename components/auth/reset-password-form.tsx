'use client'

import Link from 'next/link'
import { resetPasswordAction } from '@/app/actions/reset-password'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'

export function ResetPasswordForm({ token }: { token: string }) {
  return (
    <ActionForm
      action={resetPasswordAction}
      render={() => (
        <Link href="/sign-in" className="text-sm underline">
          Sign in with the new password
        </Link>
      )}
    >
      <input type="hidden" name="token" value={token} />
      <Field
        name="password"
        label="New password"
        type="password"
        autoComplete="new-password"
        hint="At least 8 characters and not easy to guess (a few unrelated words work well)."
        required
      />
      <Field name="confirm" label="The same password again" type="password" autoComplete="new-password" required />
      <SubmitButton pendingText="Saving…">Set new password</SubmitButton>
    </ActionForm>
  )
}
