import { redirectToSession } from '@/components/runs/old-urls'

/** An old URL (before the one engine): after a scoped lookup, the session page (404 when not visible). */
export default async function OldUrl({ params }: { params: Promise<{ sid: string }> }) {
  await redirectToSession((await params).sid)
}
