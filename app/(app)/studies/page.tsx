import type { Metadata } from 'next'
import Link from 'next/link'
import { ButtonLink } from '@/components/ui/button'
import { Badge, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { hasScope } from '@/lib/server/auth/roles'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listStudies, PROTOCOL_LABELS } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'Studies' }

export default async function StudiesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:read')
  const params = await flatParams(searchParams)
  const archived = params.archived === 'true'
  const data = await loadForPage(listStudies, { page: params.page, q: params.q, archived })
  const canCreate = hasScope(actor.role, 'studies:create')
  return (
    <>
      <PageHeader
        title="Studies"
        description="A study runs one protocol between its members and the models they work with."
        actions={canCreate && <ButtonLink href="/studies/new">New study</ButtonLink>}
      />
      <form className="mb-4 flex flex-wrap items-end gap-2" role="search">
        <label className="text-sm">
          <span className="sr-only">Search studies</span>
          <input
            name="q"
            defaultValue={params.q}
            placeholder="Search by name"
            className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
          />
        </label>
        <label className="flex items-center gap-1 text-sm text-stone-700">
          <input type="checkbox" name="archived" value="true" defaultChecked={archived} /> Archived
        </label>
        <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm">
          Filter
        </button>
      </form>
      {data.total === 0 ? (
        <EmptyState title={params.q ? 'No study matches your search.' : 'No studies yet.'}>
          {canCreate ? (
            <Link className="text-brand-700 underline" href="/studies/new">
              Create the first study
            </Link>
          ) : (
            'A researcher adds you to a study; it then appears here.'
          )}
        </EmptyState>
      ) : (
        <>
          <Table caption="Studies" head={['Name', 'Protocol', 'Members', 'Runs', 'Created']}>
            {data.items.map((s) => (
              <tr key={s.id} className="hover:bg-stone-50">
                <Td>
                  <Link href={`/studies/${s.id}`} className="font-medium text-brand-700 underline">
                    {s.name}
                  </Link>
                  {s.archivedAt && <Badge>archived</Badge>}
                  {s.description && <p className="line-clamp-1 text-xs text-stone-500">{s.description}</p>}
                </Td>
                <Td>
                  {s.protocol ? (
                    <Badge tone="brand">{PROTOCOL_LABELS[s.protocol as keyof typeof PROTOCOL_LABELS]}</Badge>
                  ) : (
                    <span className="text-stone-500">not chosen</span>
                  )}
                </Td>
                <Td>{s._count.members}</Td>
                <Td>{s._count.runs}</Td>
                <Td className="whitespace-nowrap text-stone-500">{formatDate(s.createdAt)}</Td>
              </tr>
            ))}
          </Table>
          <Pagination {...data} params={params} basePath="/studies" />
        </>
      )}
    </>
  )
}
