import type { Metadata } from 'next'
import { EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listAudit } from '@/lib/server/services/audit-log'

export const metadata: Metadata = { title: 'Audit log' }

function Json({ value }: { value: unknown }) {
  if (value == null) return <span className="text-stone-400">—</span>
  return (
    <pre className="max-w-xs overflow-x-auto whitespace-pre-wrap break-all text-xs">
      {JSON.stringify(value, null, 1)}
    </pre>
  )
}

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const params = await flatParams(searchParams)
  const data = await loadForPage(listAudit, {
    page: params.page,
    action: params.action,
    actor: params.actor,
    resourceType: params.resourceType,
  })
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every change anyone made: who, what, and the state before and after."
      />
      <form role="search" className="mb-4 flex flex-wrap gap-2 text-sm">
        {[
          ['action', 'Action starts with (e.g. user.)'],
          ['actor', 'Actor email contains'],
          ['resourceType', 'Resource type (user, study …)'],
        ].map(([name, label]) => (
          <label key={name} className="flex flex-col">
            <span className="text-xs text-stone-600">{label}</span>
            <input
              name={name}
              defaultValue={params[name as string]}
              className="rounded-md border border-stone-300 bg-white px-3 py-1.5"
            />
          </label>
        ))}
        <button type="submit" className="self-end rounded-md border border-stone-300 bg-white px-3 py-1.5">
          Filter
        </button>
      </form>
      {data.total === 0 ? (
        <EmptyState title="No audit entries match." />
      ) : (
        <>
          <Table caption="Audit entries" head={['When', 'Actor', 'Action', 'Resource', 'Before', 'After']}>
            {data.items.map((e) => (
              <tr key={e.id}>
                <Td className="whitespace-nowrap text-stone-500">{formatDate(e.createdAt)}</Td>
                <Td>
                  {e.actorEmail ?? 'system'}
                  <div className="text-xs text-stone-500">{e.via}</div>
                </Td>
                <Td className="font-mono text-xs">{e.action}</Td>
                <Td className="text-xs">
                  {e.resourceType}
                  <div className="font-mono text-stone-500">{e.resourceId}</div>
                </Td>
                <Td>
                  <Json value={e.before} />
                </Td>
                <Td>
                  <Json value={e.after} />
                </Td>
              </tr>
            ))}
          </Table>
          <Pagination {...data} params={params} basePath="/admin/audit" />
        </>
      )}
    </>
  )
}
