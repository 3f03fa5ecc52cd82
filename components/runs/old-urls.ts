import { redirect } from 'next/navigation'
import { loadForPage } from '@/lib/server/page-data'
import { getRun } from '@/lib/server/services/runs'
import { getSession } from '@/lib/server/services/sessions'

/**
 * The pages before the one engine (/experiments/…, /debates/…) live on as redirects. Each looks the
 * id up as the signed-in person first (the same scoped read as the new page), so an id they may not
 * see answers 404 and an old URL never reveals that it exists.
 */
export async function redirectToRun(runId: string, suffix = ''): Promise<never> {
  await loadForPage(getRun, { runId, pageSize: 1 })
  redirect(`/runs/${encodeURIComponent(runId)}${suffix}`)
}

export async function redirectToSession(sessionId: string): Promise<never> {
  await loadForPage(getSession, { sessionId })
  redirect(`/sessions/${encodeURIComponent(sessionId)}`)
}

/** A list or "new" page: the new one, keeping the study filter. */
export async function redirectWithStudy(
  path: string,
  searchParams: Promise<Record<string, string | string[] | undefined>>,
): Promise<never> {
  const { studyId } = await searchParams
  redirect(typeof studyId === 'string' && studyId ? `${path}?studyId=${encodeURIComponent(studyId)}` : path)
}
