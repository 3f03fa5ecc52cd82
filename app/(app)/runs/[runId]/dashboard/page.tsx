import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { LiveRefresh } from '@/components/live/live-refresh'
import { protocolLabel, uiFor } from '@/components/protocols/registry'
import { StatusBadge } from '@/components/runs/status'
import { PageHeader } from '@/components/ui/card'
import { hasScope } from '@/lib/server/auth/roles'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { runDashboard } from '@/lib/server/services/runs'

export const metadata: Metadata = { title: 'Dashboard' }

/** The protocol's dashboard of a run (404 when its protocol has none). */
export default async function RunDashboardPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { runId } = await params
  const { actor } = await requirePage('dashboards:read')
  const sp = await flatParams(searchParams)
  const d = await loadForPage(runDashboard, { runId, args: sp })
  const ui = uiFor(d.protocol)
  if (!ui?.Dashboard) notFound()
  const base = `/runs/${runId}/dashboard`
  return (
    <>
      <PageHeader
        title={
          <>
            {ui.dashboardTitle ?? 'Dashboard'} · {d.run.name} <StatusBadge status={d.run.status} />
          </>
        }
        description={
          <>
            {protocolLabel(d.protocol)} ·{' '}
            <Link href={`/runs/${runId}`} className="text-brand-700 underline">
              Back to the run
            </Link>
          </>
        }
        actions={<LiveRefresh topic={`run:${runId}`} />}
      />
      <ui.Dashboard
        runId={runId}
        data={d.data}
        params={sp}
        basePath={base}
        canInspect={hasScope(actor.role, 'work:read-study')}
      />
    </>
  )
}
