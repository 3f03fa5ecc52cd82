'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { createConnection, deleteConnection, updateConnection } from '@/lib/server/services/connections'
import { deletePrice, listConnectionModels, testConnection, upsertPrice } from '@/lib/server/services/llm'
import { createPreset, updatePreset } from '@/lib/server/services/presets'

export async function createConnectionAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(createConnection, fd, 'Connection added.')
  if (!data) return state
  revalidatePath('/connections')
  redirect(`/connections/${data.id}`)
}

export async function updateConnectionAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(updateConnection, fd, 'Connection saved.')
  if (state?.ok) revalidatePath(`/connections/${fd.get('connectionId')}`)
  return state
}

export async function deleteConnectionAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(deleteConnection, fd, 'Connection deleted.')
  if (!state?.ok) return state
  revalidatePath('/connections')
  redirect('/connections')
}

export async function testConnectionAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(testConnection, fd, 'Tested.')
  if (!data) return state
  revalidatePath('/calls')
  if (!data.ok) {
    return {
      ok: false,
      error: `The connection failed: ${data.error}`,
      data: { modelsError: data.modelsError ?? null, models: data.models ?? null },
    }
  }
  return {
    ok: true,
    message: `Connection works: the model answered in ${data.latencyMs} ms (${data.model}).`,
    data: { models: data.models ?? null, modelsError: data.modelsError ?? null },
  }
}

export async function createPresetAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(createPreset, fd, 'Preset created.')
  if (!data) return state
  revalidatePath('/presets')
  redirect(`/presets/${data.id}`)
}

export async function updatePresetAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(updatePreset, fd, (r) =>
    r.created ? `Saved as version ${r.version}. Sessions that used earlier versions keep them.` : 'Nothing changed.',
  )
  if (state?.ok) revalidatePath(`/presets/${fd.get('presetId')}`)
  return state
}

export async function upsertPriceAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(upsertPrice, fd, (p) => `Price for ${p.model} saved.`)
  if (state?.ok) revalidatePath('/admin/prices')
  return state
}

export async function deletePriceAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(deletePrice, fd, 'Price removed.')
  if (state?.ok) revalidatePath('/admin/prices')
  return state
}

/** The models a connection lists, for the preset form's model field (no call is logged). */
export async function connectionModelsAction(
  connectionId: string,
): Promise<{ models: string[]; defaultModel?: string; error: string | null }> {
  const { state, data } = await runFormAction(listConnectionModels, { connectionId }, '')
  if (!data) return { models: [], error: state?.error ?? 'Could not list the models.' }
  return data
}
