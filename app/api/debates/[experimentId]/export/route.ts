import { exportRoute } from '@/lib/server/api/stream'
import { exportDebates } from '@/lib/server/services/debate-export'

export const dynamic = 'force-dynamic'

/**
 * GET /api/debates/:id/export?table=rounds|finals&format=jsonl|csv — streamed (session cookie or
 * API key; `exports:read` and membership of the run's study).
 */
export const GET = exportRoute(exportDebates)
