'use client'

import { setupAction } from '@/app/actions/setup'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'

export function SetupForm() {
  return (
    <ActionForm action={setupAction}>
      <Field name="name" label="Your name" autoComplete="name" required />
      <Field name="email" label="Email" type="email" autoComplete="username" required />
      <Field
        name="password"
        label="Password"
        type="password"
        autoComplete="new-password"
        hint="At least 8 characters and not easy to guess: a few unrelated words work well."
        required
      />
      <SubmitButton pendingText="Creating…">Create admin account</SubmitButton>
    </ActionForm>
  )
}
