import { ApiAuthError, apiActor } from '@/lib/server/api/auth'
import { errorResponse } from '@/lib/server/api/handler'
import { execute } from '@/lib/server/operation'
import { exportRunFile } from '@/lib/server/services/run-export'

export const dynamic = 'force-dynamic'

/**
 * GET /api/runs/:runId/files/:file — a file of a run its protocol builds (a zip of a folder layout …),
 * as bytes (session cookie or API key; `exports:read` and membership of the run's study).
 */
export async function GET(req: Request, { params }: { params: Promise<{ runId: string; file: string }> }) {
  const { runId, file } = await params
  let actor: Awaited<ReturnType<typeof apiActor>>
  try {
    actor = await apiActor(req)
  } catch (err) {
    if (err instanceof ApiAuthError) return errorResponse(401, err.message, { invalidToken: true })
    throw err
  }
  const result = await execute(exportRunFile, actor, { runId, file })
  if (!result.ok) return errorResponse(result.status, result.error, { fieldErrors: result.fieldErrors })
  const { bytes, filename, contentType } = result.data
  return new Response(new Uint8Array(bytes), {
    headers: {
      'content-type': contentType,
      'content-disposition': `attachment; filename="${filename.replace(/["\\\r\n]/g, '_')}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  })
}
