'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { AppError } from '@/lib/server/errors'
import { pluginFor } from '@/lib/server/engine/plugins'
import { runFormAction } from '@/lib/server/form-action'
import { formDataToObject } from '@/lib/server/form-data'
import type { Operation } from '@/lib/server/operation'
import {
  cancelRun,
  changeSeatModel,
  createRun,
  pauseRun,
  resumeRun,
  retrySession,
  retryStalled,
  startRun,
} from '@/lib/server/services/runs'

/**
 * The run actions of every protocol. A set-up form posts its fields with a hidden `protocol`; the
 * protocol's plugin turns them into its setup input (`setup.fromForm`), and `runs.create` validates
 * and plans the run. Nothing here names a protocol.
 */
export async function createRunAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const {
    protocol: chosen,
    studyId,
    draft,
    maxInFlight,
    distinctClaimants,
    fillFirst,
    ...fields
  } = formDataToObject(fd)
  const protocol = typeof chosen === 'string' ? chosen : ''
  if (!protocol) return { ok: false, error: 'Choose a protocol.' }
  let setup: unknown
  try {
    const plan = await (await pluginFor(protocol)).setup()
    setup = plan.fromForm ? plan.fromForm({ ...fields, studyId }) : { ...fields, studyId }
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.message, fieldErrors: err.fieldErrors }
    return { ok: false, error: `Unknown protocol "${protocol}".` }
  }
  const { state, data } = await runFormAction(
    createRun,
    {
      ...(setup as Record<string, unknown>),
      studyId,
      protocol,
      maxInFlight,
      distinctClaimants,
      fillFirst,
      start: draft !== 'on' && draft !== true,
    },
    (d) => `Created with ${d.sessions} session${d.sessions === 1 ? '' : 's'}.`,
  )
  if (!data) return state
  revalidatePath('/runs')
  // The run page, whatever the protocol or the number of sessions (one session links to its page there);
  // several runs created together (a set-up that plans several): the study's run list, which shows them all.
  if (data.runs.length > 1 && typeof studyId === 'string') redirect(`/runs?studyId=${encodeURIComponent(studyId)}`)
  redirect(`/runs/${data.id}`)
}

const CONTROLS: Record<string, { op: Operation<{ runId: string }, unknown>; message: string }> = {
  start: { op: startRun, message: 'Started.' },
  pause: { op: pauseRun, message: 'Paused: steps in flight finish, nothing new starts.' },
  resume: { op: resumeRun, message: 'Resumed.' },
  cancel: { op: cancelRun, message: 'Cancelled.' },
  'retry-stalled': { op: retryStalled, message: 'The stalled sessions are queued again.' },
}

/** Start, pause, resume, cancel or retry every stalled session (the button's `intent`). */
export async function runControlAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const intent = fd.get('intent')
  const control = typeof intent === 'string' ? CONTROLS[intent] : undefined
  if (!control) return { ok: false, error: 'Unknown action.' }
  const runId = fd.get('runId')
  const { state } = await runFormAction(control.op, { runId }, control.message)
  if (typeof runId === 'string') revalidatePath(`/runs/${runId}`)
  return state
}

/** Retry one stalled session (its failed step runs again from the same message). */
export async function retrySessionAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state } = await runFormAction(retrySession, { sessionId: fd.get('sessionId') }, 'Retrying.')
  const runId = fd.get('runId')
  if (typeof runId === 'string') revalidatePath(`/runs/${runId}`)
  return state
}

/**
 * Change model: `target` is `from:<connectionId>` (every seat and helper on that connection), "seat"
 * or "seat/helper"; `model` a model choice (JSON), with an optional model name and temperature;
 * `retry` queues the run's stalled sessions again right after.
 */
export async function changeSeatModelAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const f = formDataToObject(fd)
  const target = typeof f.target === 'string' ? f.target : ''
  const where = target.startsWith('from:')
    ? { from: { connectionId: target.slice('from:'.length) } }
    : (() => {
        const [seat, helper] = target.split('/')
        return { seat: seat || undefined, ...(helper ? { helper } : {}) }
      })()
  let model: Record<string, unknown> | undefined
  try {
    model = typeof f.model === 'string' ? (JSON.parse(f.model) as Record<string, unknown>) : undefined
  } catch {
    model = undefined
  }
  if (model && typeof f.modelName === 'string') model.model = f.modelName
  if (model && f.temperature !== undefined) model.temperature = Number(f.temperature)
  const { state } = await runFormAction(
    changeSeatModel,
    { runId: f.runId, ...where, model, retry: f.retry === 'on' || f.retry === true },
    (d) =>
      `Changed ${d.changed.length === 1 ? 'one seat' : `${d.changed.length} seats`} to ${d.changed[0]?.model.model ?? 'the new model'} for the run and ${d.sessions} unfinished session${d.sessions === 1 ? '' : 's'}${
        d.retried ? `; ${d.retried} stalled session${d.retried === 1 ? '' : 's'} queued again` : ''
      }.`,
  )
  if (typeof f.runId === 'string') revalidatePath(`/runs/${f.runId}`)
  return state
}
