import { GET as exportRun } from '@/app/api/runs/[runId]/export/route'
import { methods } from '@/lib/server/api/handler'

/**
 * GET /api/v1/runs/{runId}/export?table=…&format=jsonl|csv: a run's D, M or C or one of its
 * protocol's tables, streamed (the same handler as /api/runs/{runId}/export; listed in openapi.json).
 */
export const dynamic = 'force-dynamic'
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({ GET: exportRun })
