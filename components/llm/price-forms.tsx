'use client'

import { deletePriceAction, upsertPriceAction } from '@/app/actions/llm'
import { ActionForm, Field, SubmitButton } from '@/components/forms/action-form'

export function PriceForm() {
  return (
    <ActionForm
      action={upsertPriceAction}
      className="grid gap-3 sm:grid-cols-[1fr_10rem_10rem_auto] sm:items-end sm:space-y-0"
    >
      <Field name="model" label="Model (or prefix*)" placeholder="gpt-4o-mini" required />
      <Field name="inputPerMTok" label="$ per 1M input" type="number" required />
      <Field name="outputPerMTok" label="$ per 1M output" type="number" required />
      <SubmitButton>Save price</SubmitButton>
    </ActionForm>
  )
}

export function DeletePriceForm({ priceId, model }: { priceId: string; model: string }) {
  return (
    <ActionForm action={deletePriceAction}>
      <input type="hidden" name="priceId" value={priceId} />
      <button type="submit" className="text-xs text-red-700 underline" aria-label={`Remove the price of ${model}`}>
        Remove
      </button>
    </ActionForm>
  )
}
