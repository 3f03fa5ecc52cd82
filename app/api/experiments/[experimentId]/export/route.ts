import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { streamedDownload } from '@/lib/server/api/stream'
import { execute } from '@/lib/server/operation'
import { exportExperiment } from '@/lib/server/services/pxp-export'

export const dynamic = 'force-dynamic'

/**
 * GET /api/experiments/:id/export?table=d|m|c|stats&format=jsonl|csv — streamed as it is read
 * (session cookie or API key; `exports:read` and membership of the experiment's study).
 */
export async function GET(req: Request, { params }: { params: Promise<{ experimentId: string }> }) {
  const { experimentId } = await params
  const url = new URL(req.url)
  let actor: Awaited<ReturnType<typeof apiActor>>
  try {
    actor = await apiActor(req)
  } catch (err) {
    if (err instanceof ApiAuthError) return Response.json({ error: err.message }, { status: 401 })
    throw err
  }
  const result = await execute(exportExperiment, actor, {
    experimentId,
    table: url.searchParams.get('table') ?? undefined,
    format: url.searchParams.get('format') ?? undefined,
  })
  if (!result.ok)
    return Response.json({ error: result.error, fieldErrors: result.fieldErrors }, { status: result.status })
  return streamedDownload(result.data.lines(), result.data)
}
