import type { Metadata } from 'next'
import Link from 'next/link'
import { Badge, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listMySessions } from '@/lib/server/services/pxp-sessions'

export const metadata: Metadata = { title: 'My sessions' }

const LABEL: Record<string, [string, 'amber' | 'brand' | 'red' | 'green']> = {
  awaiting: ['awaiting you', 'amber'],
  running: ['machine thinking', 'brand'],
  stalled: ['stalled', 'red'],
  done: ['done', 'green'],
}

export default async function SessionsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const params = await flatParams(searchParams)
  const data = await loadForPage(listMySessions, { page: params.page, status: params.status })
  const next = data.items.find((s) => s.status === 'awaiting')
  return (
    <>
      <PageHeader
        title="My sessions"
        description="PXP sessions where you are the human agent."
        actions={
          next && (
            <Link
              href={next.protocol === 'evince' ? `/debates/sessions/${next.id}` : `/sessions/${next.id}`}
              className="rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white"
            >
              Next session
            </Link>
          )
        }
      />
      {data.total === 0 ? (
        <EmptyState title="No sessions assigned to you.">
          When a researcher starts an experiment with you as the tester, your sessions appear here.
        </EmptyState>
      ) : (
        <>
          <Table caption="Your sessions" head={['Session', 'Study', 'Status', 'Messages', 'Updated']}>
            {data.items.map((s) => {
              const [label, tone] = LABEL[s.status] ?? [s.status, 'brand']
              return (
                <tr key={s.id}>
                  <Td>
                    <Link
                      href={s.protocol === 'evince' ? `/debates/sessions/${s.id}` : `/sessions/${s.id}`}
                      className="font-medium text-brand-700 hover:underline"
                    >
                      {s.experiment?.name ?? 'Session'} · {s.task.toUpperCase()} #{s.position + 1} (rep. {s.repetition})
                    </Link>
                  </Td>
                  <Td>{s.study.name}</Td>
                  <Td>
                    <Badge tone={tone}>{label}</Badge>
                  </Td>
                  <Td>{s._count.messages}</Td>
                  <Td className="text-stone-500">{formatDate(s.updatedAt)}</Td>
                </tr>
              )
            })}
          </Table>
          <Pagination {...data} params={params} basePath="/sessions" />
        </>
      )}
    </>
  )
}
