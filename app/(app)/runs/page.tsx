import type { Metadata } from 'next'
import Link from 'next/link'
import { formatCount } from '@/lib/format'
import { runnableProtocols } from '@/components/protocols/registry'
import { StatusBadge } from '@/components/runs/status'
import { ButtonLink } from '@/components/ui/button'
import { Badge, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { hasScope } from '@/lib/server/auth/roles'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listRuns, RUN_STATUSES } from '@/lib/server/services/runs'

export const metadata: Metadata = { title: 'Runs' }

/** Every run of the studies the person may read, of every protocol, with what it is doing now. */
export default async function RunsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:read')
  const params = await flatParams(searchParams)
  const data = await loadForPage(listRuns, {
    page: params.page,
    studyId: params.studyId || undefined,
    protocol: params.protocol || undefined,
    status: params.status || undefined,
  })
  const canCreate = hasScope(actor.role, 'studies:update')
  return (
    <>
      <PageHeader
        title="Runs"
        description="Every run of a protocol over a study's data: batch experiments, debates, single cases."
        actions={
          <div className="flex items-center gap-3">
            {hasScope(actor.role, 'dashboards:read') && (
              <Link href="/runs/compare" className="text-sm text-brand-700 underline">
                Compare two runs
              </Link>
            )}
            {canCreate && params.studyId ? (
              <Link href={`/studies/${params.studyId}/import-runs`} className="text-sm text-brand-700 underline">
                Import trajectories
              </Link>
            ) : null}
            {canCreate ? (
              <ButtonLink href={`/runs/new${params.studyId ? `?studyId=${params.studyId}` : ''}`}>New run</ButtonLink>
            ) : null}
          </div>
        }
      />
      <form className="mb-4 flex flex-wrap items-end gap-2 text-sm" role="search">
        {params.studyId && <input type="hidden" name="studyId" value={params.studyId} />}
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Protocol</span>
          <select
            name="protocol"
            defaultValue={params.protocol ?? ''}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          >
            <option value="">Any</option>
            {runnableProtocols().map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Status</span>
          <select
            name="status"
            defaultValue={params.status ?? ''}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          >
            <option value="">Any</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1.5 hover:bg-stone-100">
          Filter
        </button>
      </form>
      {data.total === 0 ? (
        <EmptyState title="No runs yet.">
          {canCreate
            ? 'Import a dataset into a study (or type a single case in), then set up a run.'
            : 'Runs of your studies appear here.'}
        </EmptyState>
      ) : (
        <>
          <Table caption="Runs" head={['Name', 'Protocol', 'Study', 'Progress', 'Status', 'Created']}>
            {data.items.map((e) => (
              <tr key={e.id} data-run-id={e.id}>
                <Td>
                  <Link href={`/runs/${e.id}`} className="font-medium text-brand-700 underline">
                    {e.name}
                  </Link>
                </Td>
                <Td>
                  {e.protocolLabel} · {e.task.toUpperCase()}
                  {e.repetitions > 1 ? ` · R = ${e.repetitions}` : ''}
                </Td>
                <Td>
                  <Link href={`/studies/${e.study.id}`} className="hover:underline">
                    {e.study.name}
                  </Link>
                </Td>
                <Td>
                  {formatCount(e.done)} / {formatCount(e.sessions)} done
                  {e.awaiting ? (
                    <span className="block text-xs text-stone-500">{e.awaiting} awaiting a person</span>
                  ) : null}
                  {e.stalled ? <span className="block text-xs text-red-700">{e.stalled} stalled</span> : null}
                </Td>
                <Td>
                  <span className="flex flex-wrap items-center gap-1" data-testid="run-status">
                    <StatusBadge status={e.status} />
                    {e.blocked === 'stalled' ? (
                      <Badge tone="red">blocked</Badge>
                    ) : e.blocked === 'people' ? (
                      <Badge tone="amber">waiting for people</Badge>
                    ) : null}
                  </span>
                </Td>
                <Td>{formatDate(e.createdAt)}</Td>
              </tr>
            ))}
          </Table>
          <Pagination {...data} params={params} basePath="/runs" />
        </>
      )}
    </>
  )
}
