'use server'

import { redirect } from 'next/navigation'
import type { ActionState } from '@/lib/action-state'
import { runFormAction } from '@/lib/server/form-action'
import { createTaskTemplate, tryMatch } from '@/protocols/pxp/server/templates'

const text = (fd: FormData, k: string) => {
  const v = fd.get(k)
  return typeof v === 'string' && v.trim() !== '' ? v : undefined
}

/** The MATCH spec from the form's mode and the fields that belong to it. */
function matchOf(fd: FormData) {
  const mode = text(fd, 'matchMode') ?? 'case-insensitive'
  if (mode === 'set') return { mode, separator: fd.get('separator') || ',' }
  if (mode === 'regex') return { mode, pattern: text(fd, 'pattern') ?? '', flags: fd.get('flags') ?? '' }
  if (mode === 'numeric')
    return { mode, tolerance: text(fd, 'tolerance') ?? '0', relative: fd.get('relative') === 'on' }
  return { mode }
}

export async function createTemplateAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const raw = {
    studyId: text(fd, 'studyId'),
    name: text(fd, 'name'),
    systemPrompt: text(fd, 'systemPrompt'),
    queryPrompt: text(fd, 'queryPrompt'),
    predictionField: text(fd, 'predictionField'),
    explanationField: text(fd, 'explanationField'),
    labels: String(fd.get('labels') ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
    match: matchOf(fd),
    agreePrompt: text(fd, 'agreePrompt'),
  }
  const { state, data } = await runFormAction(createTaskTemplate, raw, (d) => `Saved “${d.name}”.`)
  if (!data) {
    // Field errors of the nested MATCH spec show next to the field of the chosen mode (the form
    // shows only that one), not a second time above the form.
    const fe = state?.fieldErrors
    const field = { regex: 'pattern', numeric: 'tolerance', set: 'separator' }[raw.match.mode as string]
    if (fe?.match && field) {
      fe[field] = fe.match
      delete fe.match
    }
    return state
  }
  redirect(`/studies/${raw.studyId}/p/pxp/templates/${data.id}`)
}

export async function tryMatchAction(_prev: ActionState, fd: FormData): Promise<ActionState> {
  const { state, data } = await runFormAction(
    tryMatch,
    { match: matchOf(fd), a: fd.get('tryA') ?? '', b: fd.get('tryB') ?? '' },
    (d) => (d.match ? 'MATCH: these two predictions match.' : 'No MATCH: these two predictions differ.'),
  )
  return data && state ? { ...state, data: { match: data.match } } : state
}
