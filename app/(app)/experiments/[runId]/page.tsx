import { redirectToRun } from '@/components/runs/old-urls'

/** An old URL (before the one engine): after a scoped lookup, the run page (404 when not visible). */
export default async function OldUrl({ params }: { params: Promise<{ runId: string }> }) {
  await redirectToRun((await params).runId)
}
