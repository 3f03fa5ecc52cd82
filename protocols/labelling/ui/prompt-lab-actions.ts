'use server'

import { revalidatePath } from 'next/cache'
import type { z } from 'zod'
import { runFormAction } from '@/lib/server/form-action'
import {
  getLabRun,
  type LabRunView,
  retryLabRun,
  type StartLabRunInput,
  startLabRunOp,
} from '@/protocols/labelling/server/lab-runs'

export type PromptLabRunInput = z.input<typeof StartLabRunInput>
export type PromptLabRunAnswer = { labRunId: string | null; error: string | null }

/**
 * "Run" on the prompt lab: one lab run of the picked prompts (`labelling.lab-runs.start`, study
 * write), put on the job queue; answers at once with its id (the page then follows its progress).
 */
export async function startPromptLabRuns(raw: PromptLabRunInput): Promise<PromptLabRunAnswer> {
  const { state, data } = await runFormAction(startLabRunOp, raw, 'Queued.')
  if (!data) return { labRunId: null, error: state?.error ?? 'Refused.' }
  revalidatePath(`/studies/${raw.studyId}/p/labelling/prompt-lab`)
  return { labRunId: data.labRunId, error: null }
}

/** A lab run's progress (`labelling.lab-runs.get`, study read), for the page's poll. */
export async function labRunProgress(labRunId: string): Promise<{ view: LabRunView | null; error: string | null }> {
  const { state, data } = await runFormAction(getLabRun, { labRunId }, '')
  return data ? { view: data, error: null } : { view: null, error: state?.error ?? 'Refused.' }
}

/** Retry a failed lab run (`labelling.lab-runs.retry`, study write). */
export async function retryPromptLabRun(labRunId: string): Promise<{ error: string | null }> {
  const { state, data } = await runFormAction(retryLabRun, { labRunId }, 'Queued again.')
  return { error: data ? null : (state?.error ?? 'Refused.') }
}
