import { redirectToRun } from '@/components/runs/old-urls'

/** An old URL (before the one engine): after a scoped lookup, the session inspector (404 when not visible). */
export default async function OldUrl({ params }: { params: Promise<{ runId: string; sessionId: string }> }) {
  const { runId, sessionId } = await params
  await redirectToRun(runId, `/sessions/${encodeURIComponent(sessionId)}`)
}
