/** GET /api/v1/runs/{runId}/files/{file}: a file its protocol builds for a run (listed in openapi.json). */
export { GET } from '@/app/api/runs/[runId]/files/[file]/route'

export const dynamic = 'force-dynamic'
