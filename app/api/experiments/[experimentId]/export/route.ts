import { exportRoute } from '@/lib/server/api/stream'
import { exportExperiment } from '@/lib/server/services/pxp-export'

export const dynamic = 'force-dynamic'

/**
 * GET /api/experiments/:id/export?table=d|m|c|stats&format=jsonl|csv — streamed as it is read
 * (session cookie or API key; `exports:read` and membership of the experiment's study).
 */
export const GET = exportRoute(exportExperiment)
