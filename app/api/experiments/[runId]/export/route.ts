import { GET as runExport } from '@/app/api/runs/[runId]/export/route'

export const dynamic = 'force-dynamic'

/**
 * GET /api/experiments/:id/export?table=…&format=jsonl|csv — the old address of a run's export, kept for
 * scripts: the same handler as /api/runs/:id/export (same tables, scopes and visibility).
 */
export function GET(req: Request, { params }: { params: Promise<{ runId: string }> }) {
  return runExport(req, { params: params.then((p) => ({ runId: p.runId })) })
}
