import type { Metadata } from 'next'
import Link from 'next/link'
import { StatusBadge } from '@/components/experiments/status'
import { ButtonLink } from '@/components/ui/button'
import { EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { hasScope } from '@/lib/server/auth/roles'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listExperiments } from '@/lib/server/services/experiment-views'

export const metadata: Metadata = { title: 'Experiments' }

export default async function ExperimentsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:read')
  const params = await flatParams(searchParams)
  const data = await loadForPage(listExperiments, { page: params.page, studyId: params.studyId })
  return (
    <>
      <PageHeader
        title="Experiments"
        description="Batch runs of a protocol over a dataset: R repetitions, one session per instance and repetition."
        actions={
          hasScope(actor.role, 'studies:update') ? (
            <ButtonLink href={`/experiments/new${params.studyId ? `?studyId=${params.studyId}` : ''}`}>
              New experiment
            </ButtonLink>
          ) : undefined
        }
      />
      {data.total === 0 ? (
        <EmptyState title="No experiments yet.">
          {hasScope(actor.role, 'studies:update')
            ? 'Import a dataset into a study, then set up an experiment over it.'
            : 'Experiments of your studies appear here.'}
        </EmptyState>
      ) : (
        <>
          <Table caption="Experiments" head={['Name', 'Study', 'Task', 'Progress', 'Status', 'Created']}>
            {data.items.map((e) => (
              <tr key={e.id}>
                <Td>
                  <Link
                    href={e.protocol === 'evince' ? `/debates/${e.id}` : `/experiments/${e.id}`}
                    className="font-medium text-brand-700 hover:underline"
                  >
                    {e.name}
                  </Link>
                </Td>
                <Td>
                  <Link href={`/studies/${e.study.id}`} className="hover:underline">
                    {e.study.name}
                  </Link>
                </Td>
                <Td>
                  {e.protocol.toUpperCase()} · {e.task.toUpperCase()} · R = {e.repetitions}
                </Td>
                <Td>
                  {e.done} / {e.sessions} sessions done
                </Td>
                <Td>
                  <StatusBadge status={e.status} />
                </Td>
                <Td>{formatDate(e.createdAt)}</Td>
              </tr>
            ))}
          </Table>
          <Pagination {...data} params={params} basePath="/experiments" />
        </>
      )}
    </>
  )
}
