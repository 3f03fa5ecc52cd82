'use server'

import { revalidatePath } from 'next/cache'
import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { createDebate, mergeDebateLabels, submitDebateTurn } from '@/lib/server/services/debates'

const text = (fd: FormData, k: string) => {
  const v = fd.get(k)
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}
const num = (fd: FormData, k: string) => (text(fd, k) === undefined ? undefined : Number(text(fd, k)))

/** A debater from the form: `<seat>Kind` = llm | human, a model choice (JSON) or an expert id. */
function debater(fd: FormData, seat: 'A' | 'B') {
  if (text(fd, `${seat}Kind`) === 'human') return { kind: 'human', userId: text(fd, `${seat}User`) }
  let ref: Record<string, unknown> = {}
  try {
    ref = JSON.parse(text(fd, `${seat}Model`) ?? '{}') as Record<string, unknown>
  } catch {}
  const model = text(fd, `${seat}ModelName`)
  const temperature = num(fd, `${seat}Temperature`)
  return {
    kind: 'llm',
    connectionId: ref.connectionId,
    ...(model ? { model } : typeof ref.model === 'string' ? { model: ref.model } : {}),
    ...(temperature !== undefined
      ? { temperature }
      : typeof ref.temperature === 'number'
        ? { temperature: ref.temperature }
        : {}),
  }
}

/** "alias = canonical" lines → an alias map. */
function aliases(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of (raw ?? '').split(/\r?\n/)) {
    const m = line.match(/^(.+?)\s*(?:=|→|->)\s*(.+)$/)
    if (m?.[1] && m[2]) out[m[1].trim()] = m[2].trim()
  }
  return out
}

export async function createDebateAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  let judge: Record<string, unknown> | undefined
  try {
    const j = text(fd, 'judge')
    judge = j ? (JSON.parse(j) as Record<string, unknown>) : undefined
  } catch {}
  const judgeModel = text(fd, 'judgeModelName')
  const single = text(fd, 'source') === 'single'
  const raw = {
    studyId: text(fd, 'studyId'),
    name: text(fd, 'name'),
    A: debater(fd, 'A'),
    B: debater(fd, 'B'),
    judge: judge
      ? {
          connectionId: judge.connectionId,
          ...(judgeModel ? { model: judgeModel } : judge.model ? { model: judge.model } : {}),
        }
      : undefined,
    config: {
      k: num(fd, 'k'),
      maxRounds: num(fd, 'maxRounds'),
      tau: num(fd, 'tau'),
      epsilon: num(fd, 'epsilon'),
      delta: {
        initial: num(fd, 'deltaInitial') ?? 0.9,
        decay: num(fd, 'deltaDecay') ?? 0.75,
        hold: num(fd, 'deltaHold') ?? 2,
      },
    },
    aliases: aliases(text(fd, 'aliases')),
    constrained: fd.get('constrained') === 'on',
    ...(single
      ? { case: { symptoms: text(fd, 'symptoms') ?? '', truth: text(fd, 'truth') ?? '' } }
      : { datasetId: text(fd, 'datasetId'), sample: text(fd, 'sample') }),
    start: true,
  }
  const { state, data } = await runFormAction(createDebate, raw, (d) => `Started ${d.cases} debate(s).`)
  if (!data) return state
  revalidatePath('/debates')
  redirect(data.cases === 1 && data.firstSessionId ? `/debates/sessions/${data.firstSessionId}` : `/debates/${data.id}`)
}

/** A human debater's turn: the top-k editor posts JSON in `turn`. */
export async function submitDebateTurnAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  let turn: Record<string, unknown> = {}
  try {
    turn = JSON.parse(text(fd, 'turn') ?? '{}') as Record<string, unknown>
  } catch {
    return { ok: false, error: 'The turn could not be read; reload the page (your draft is kept).' }
  }
  const { state } = await runFormAction(
    submitDebateTurn,
    { ...turn, sessionId: text(fd, 'sessionId'), seq: text(fd, 'seq') },
    'Sent. The other debater answers next.',
  )
  return state
}

/** Merge two labels for a run's results, or clear the merges (`intent` = clear). */
export async function mergeLabelsAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const experimentId = text(fd, 'experimentId')
  const raw =
    text(fd, 'intent') === 'clear'
      ? { experimentId, clear: true }
      : { experimentId, from: text(fd, 'from'), into: text(fd, 'into') }
  const { state } = await runFormAction(mergeDebateLabels, raw, 'The results now count the merged labels as one.')
  if (state?.ok) revalidatePath(`/debates/${experimentId}`)
  return state
}
