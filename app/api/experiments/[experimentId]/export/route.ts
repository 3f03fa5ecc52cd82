import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
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
  const lines = result.data.lines()
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Up to ~64 KB per chunk: few enqueues for large exports, a quick first byte for small ones.
        let chunk = ''
        for (;;) {
          const next = await lines.next()
          if (next.done) {
            if (chunk) controller.enqueue(encoder.encode(chunk))
            controller.close()
            return
          }
          chunk += `${next.value}\n`
          if (chunk.length > 65_536) break
        }
        controller.enqueue(encoder.encode(chunk))
      } catch (err) {
        console.error('[parley] export failed mid-stream:', err)
        controller.error(err)
      }
    },
    async cancel() {
      await lines.return(undefined)
    },
  })
  return new Response(body, {
    headers: {
      'content-type': result.data.contentType,
      'content-disposition': `attachment; filename="${result.data.filename}"`,
      'cache-control': 'no-store',
    },
  })
}
