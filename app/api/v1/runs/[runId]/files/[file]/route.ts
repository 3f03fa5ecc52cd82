import { GET as runFile } from '@/app/api/runs/[runId]/files/[file]/route'
import { methods } from '@/lib/server/api/handler'

/** GET /api/v1/runs/{runId}/files/{file}: a file its protocol builds for a run (listed in openapi.json). */
export const dynamic = 'force-dynamic'
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({ GET: runFile })
