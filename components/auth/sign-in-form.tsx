'use client'

import { signInAction } from '@/app/actions/account'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'

export function SignInForm({ next }: { next?: string }) {
  return (
    <ActionForm action={signInAction}>
      <input type="hidden" name="next" value={next ?? ''} />
      <Field name="email" label="Email" type="email" autoComplete="username" required />
      <Field name="password" label="Password" type="password" autoComplete="current-password" required />
      <SubmitButton pendingText="Signing in…">Sign in</SubmitButton>
    </ActionForm>
  )
}
