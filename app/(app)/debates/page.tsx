import type { Metadata } from 'next'
import Link from 'next/link'
import { StatusBadge } from '@/components/experiments/status'
import { ButtonLink } from '@/components/ui/button'
import { EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { hasScope } from '@/lib/server/auth/roles'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listDebates } from '@/lib/server/services/debates'

export const metadata: Metadata = { title: 'Debates' }

export default async function DebatesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:read')
  const params = await flatParams(searchParams)
  const data = await loadForPage(listDebates, { page: params.page })
  return (
    <>
      <PageHeader
        title="Debates (EVINCE)"
        description="Two agents debate a diagnosis round by round; the moderator measures entropy, divergences, Wasserstein distance, mutual information and argument quality, and stops when the debate stops making progress."
        actions={
          hasScope(actor.role, 'studies:update') ? <ButtonLink href="/debates/new">New debate</ButtonLink> : undefined
        }
      />
      {data.total === 0 ? (
        <EmptyState title="No debates yet.">
          {hasScope(actor.role, 'studies:update')
            ? 'Start one from a typed-in case, or import a case set (CSV/JSONL of symptoms and labels) into a study.'
            : 'Debates of your studies appear here.'}
        </EmptyState>
      ) : (
        <>
          <Table caption="Debates" head={['Name', 'Study', 'Progress', 'Status', 'Created']}>
            {data.items.map((e) => (
              <tr key={e.id}>
                <Td>
                  <Link href={`/debates/${e.id}`} className="font-medium text-brand-700 hover:underline">
                    {e.name}
                  </Link>
                </Td>
                <Td>
                  <Link href={`/studies/${e.study.id}`} className="hover:underline">
                    {e.study.name}
                  </Link>
                </Td>
                <Td>
                  {e.done} / {e.sessions} case{e.sessions === 1 ? '' : 's'} done
                </Td>
                <Td>
                  <StatusBadge status={e.status} />
                </Td>
                <Td>{formatDate(e.createdAt)}</Td>
              </tr>
            ))}
          </Table>
          <Pagination {...data} params={params} basePath="/debates" />
        </>
      )}
    </>
  )
}
