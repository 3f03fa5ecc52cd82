import { redirectToRun } from '@/components/runs/old-urls'

/** An old URL (before the one engine): after a scoped lookup, the session inspector (404 when not visible). */
export default async function OldUrl({ params }: { params: Promise<{ experimentId: string; sessionId: string }> }) {
  const { experimentId, sessionId } = await params
  await redirectToRun(experimentId, `/sessions/${encodeURIComponent(sessionId)}`)
}
