'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { createPxpExperiment } from '@/lib/server/services/experiments'

/** A model choice from the form: a preset's latest settings or a connection, as JSON. */
function modelRef(fd: FormData, field: string, overrides: Record<string, unknown>) {
  const raw = fd.get(field)
  if (typeof raw !== 'string' || !raw) return undefined
  try {
    const ref = JSON.parse(raw) as Record<string, unknown>
    for (const [k, v] of Object.entries(overrides)) if (v !== undefined && v !== '') ref[k] = v
    return ref
  } catch {
    return undefined
  }
}

const text = (fd: FormData, k: string) => {
  const v = fd.get(k)
  return typeof v === 'string' && v.trim() !== '' ? v : undefined
}

export async function createExperimentAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const raw = {
    studyId: text(fd, 'studyId'),
    name: text(fd, 'name'),
    datasetId: text(fd, 'datasetId'),
    templateId: text(fd, 'templateId'),
    sample: text(fd, 'sample'),
    repetitions: text(fd, 'repetitions'),
    n: text(fd, 'n'),
    k: text(fd, 'k'),
    generator: modelRef(fd, 'generator', {
      model: text(fd, 'machineModel'),
      temperature: text(fd, 'temperature') === undefined ? undefined : Number(text(fd, 'temperature')),
    }),
    checker: modelRef(fd, 'checker', { model: text(fd, 'checkerModel') }),
    tester: text(fd, 'tester'),
    machine: text(fd, 'machine'),
    testerGenerator: text(fd, 'tester') === 'llm' ? modelRef(fd, 'testerModel', {}) : undefined,
    expertIds: fd.getAll('expertIds').filter((v): v is string => typeof v === 'string' && v !== ''),
    carryOver: fd.get('carryOver') === 'on' ? 'true' : 'false',
    shuffle: fd.get('shuffle') === 'on' ? 'true' : 'false',
  }
  const { state, data } = await runFormAction(createPxpExperiment, raw, (d) => `Created with ${d.sessions} sessions.`)
  if (!data) return state
  revalidatePath('/experiments')
  redirect(`/experiments/${data.id}`)
}
