'use client'

import { completeWorkAction } from '@/app/actions/work'
import { ActionForm, SubmitButton } from '@/components/forms/action-form'

export function CompleteWorkForm({ workId }: { workId: string }) {
  return (
    <ActionForm action={completeWorkAction}>
      <input type="hidden" name="workId" value={workId} />
      <SubmitButton pendingText="Saving…">Mark done</SubmitButton>
    </ActionForm>
  )
}
