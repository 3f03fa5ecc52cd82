import { exportRoute } from '@/lib/server/api/stream'
import { exportRun } from '@/lib/server/services/run-export'

export const dynamic = 'force-dynamic'

/**
 * GET /api/runs/:runId/export?table=…&format=jsonl|csv — a run's D, M or C, or one of its protocol's
 * tables (PXP: stats; EVINCE: rounds, finals), streamed as it is read (session cookie or API key;
 * `exports:read` and membership of the run's study).
 */
export const GET = exportRoute(exportRun)
