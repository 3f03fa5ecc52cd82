import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { errorResponse } from '@/lib/server/api/handler'
import { execute, type Operation } from '@/lib/server/operation'
import { log } from '@/lib/server/log'

/**
 * A streamed download: lines from an async generator, joined with newlines and sent in chunks of
 * up to ~64 KB (few enqueues for large exports, a quick first byte for small ones). Closing the
 * request stops the generator.
 */
export function streamedDownload(
  lines: AsyncGenerator<string, void, unknown>,
  file: { filename: string; contentType: string },
): Response {
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
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
        log().error({ err }, 'export failed mid-stream')
        controller.error(err)
      }
    },
    async cancel() {
      await lines.return(undefined)
    },
  })
  return new Response(body, {
    headers: {
      'content-type': file.contentType,
      'content-disposition': `attachment; filename="${file.filename}"`,
      'cache-control': 'no-store',
    },
  })
}

/**
 * GET handler of an export route `…/[runId]/export?table=…&format=jsonl|csv[&<table's args>]`: the session cookie or
 * an API key, the operation's scope and visibility checks, then the streamed lines. Routes whose
 * segment has another name (the old `/api/experiments/[runId]/export`) map it to `runId`.
 */
export function exportRoute(
  op: Operation<
    { runId: string; table?: string; format?: string; args?: Record<string, string> },
    { filename: string; contentType: string; lines: () => AsyncGenerator<string, void, unknown> }
  >,
) {
  return async (req: Request, { params }: { params: Promise<{ runId: string }> }) => {
    const { runId } = await params
    const url = new URL(req.url)
    let actor: Awaited<ReturnType<typeof apiActor>>
    try {
      actor = await apiActor(req)
    } catch (err) {
      if (err instanceof ApiAuthError) return errorResponse(401, err.message, { invalidToken: true })
      throw err
    }
    // The query's other values are the table's own parameters (checked by the table).
    const args: Record<string, string> = {}
    for (const [k, v] of url.searchParams) if (k !== 'table' && k !== 'format') args[k] = v
    const result = await execute(op, actor, {
      runId,
      table: url.searchParams.get('table') ?? undefined,
      format: url.searchParams.get('format') ?? undefined,
      args,
    })
    if (!result.ok) return errorResponse(result.status, result.error, { fieldErrors: result.fieldErrors })
    return streamedDownload(result.data.lines(), result.data)
  }
}
