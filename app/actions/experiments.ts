'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import type { Operation } from '@/lib/server/operation'
import { runFormAction } from '@/lib/server/form-action'
import {
  cancelExperiment,
  pauseExperiment,
  resumeExperiment,
  retrySession,
  startExperiment,
} from '@/lib/server/services/experiment-runs'
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

const RUN_OPS: Record<
  'start' | 'pause' | 'resume' | 'cancel',
  Operation<{ experimentId: string }, { experimentId: string }>
> = {
  start: startExperiment,
  pause: pauseExperiment,
  resume: resumeExperiment,
  cancel: cancelExperiment,
} as const
const RUN_MESSAGES: Record<keyof typeof RUN_OPS, string> = {
  start: 'Started.',
  pause: 'Paused: steps in flight finish, nothing new starts.',
  resume: 'Resumed.',
  cancel: 'Cancelled.',
}

/** Start, pause, resume or cancel (the button's `intent`). */
export async function experimentRunAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const intent = fd.get('intent')
  if (typeof intent !== 'string' || !(intent in RUN_OPS)) return { ok: false, error: 'Unknown action.' }
  const key = intent as keyof typeof RUN_OPS
  const { state, data } = await runFormAction(RUN_OPS[key], { experimentId: fd.get('experimentId') }, RUN_MESSAGES[key])
  if (data) revalidatePath(`/experiments/${data.experimentId}`)
  return state
}

export async function retrySessionAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(retrySession, { sessionId: fd.get('sessionId') }, 'Retrying.')
  const experimentId = fd.get('experimentId')
  if (typeof experimentId === 'string') revalidatePath(`/experiments/${experimentId}`)
  return state
}
