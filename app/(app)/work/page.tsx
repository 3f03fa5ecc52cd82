import type { Metadata } from 'next'
import Link from 'next/link'
import { Badge, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listMyWork } from '@/lib/server/services/work'

export const metadata: Metadata = { title: 'My work' }

const STATUS_TONE = { open: 'amber', in_progress: 'brand', done: 'green' } as const

export default async function WorkPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const params = await flatParams(searchParams)
  const data = await loadForPage(listMyWork, { page: params.page, status: params.status })
  return (
    <>
      <PageHeader title="My work" description="Sessions and items assigned to you. Only you see your queue." />
      <nav aria-label="Filter by status" className="mb-4 flex gap-2 text-sm">
        {[
          ['', 'All'],
          ['open', 'Open'],
          ['done', 'Done'],
        ].map(([value, label]) => (
          <Link
            key={value}
            href={value ? `/work?status=${value}` : '/work'}
            aria-current={(params.status ?? '') === value ? 'page' : undefined}
            className="rounded-full border border-stone-300 bg-white px-3 py-1 aria-[current=page]:border-brand-600 aria-[current=page]:text-brand-700"
          >
            {label}
          </Link>
        ))}
      </nav>
      {data.total === 0 ? (
        <EmptyState title="Nothing assigned to you right now.">
          When a researcher assigns you a session or items to label, they appear here.
        </EmptyState>
      ) : (
        <>
          <Table caption="Your work" head={['Title', 'Study', 'Status', 'Assigned']}>
            {data.items.map((w) => (
              <tr key={w.id} className="hover:bg-stone-50">
                <Td>
                  <Link href={`/work/${w.id}`} className="font-medium text-brand-700 hover:underline">
                    {w.title}
                  </Link>
                </Td>
                <Td>{w.study.name}</Td>
                <Td>
                  <Badge tone={STATUS_TONE[w.status as keyof typeof STATUS_TONE] ?? 'stone'}>
                    {w.status.replace('_', ' ')}
                  </Badge>
                </Td>
                <Td className="whitespace-nowrap text-stone-500">{formatDate(w.createdAt)}</Td>
              </tr>
            ))}
          </Table>
          <Pagination {...data} params={params} basePath="/work" />
        </>
      )}
    </>
  )
}
