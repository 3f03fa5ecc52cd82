import type { Metadata } from 'next'
import Link from 'next/link'
import { AuditDiff } from '@/components/admin/audit-diff'
import { EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listAudit } from '@/lib/server/services/audit-log'

export const metadata: Metadata = { title: 'Audit log' }

/** A name with its id on hover (and the id itself when the thing has no name or is gone). */
function Named({ name, id, href }: { name: string | null; id: string | null; href?: string }) {
  if (!id) return <span className="text-stone-500">—</span>
  const label = name ?? <span className="font-mono text-xs">{id}</span>
  return (
    <span title={id} data-id={id}>
      {href && name ? (
        <Link href={href} className="underline decoration-stone-300 hover:decoration-stone-600">
          {label}
        </Link>
      ) : (
        label
      )}
    </span>
  )
}

/** The query's parameters that have a value (for a link that changes one of them). */
function definedParams(params: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => !!e[1]))
}

const HREF: Record<string, (id: string) => string> = {
  study: (id) => `/studies/${id}`,
  run: (id) => `/runs/${id}`,
  dataset: (id) => `/datasets/${id}`,
  connection: (id) => `/connections/${id}`,
  preset: (id) => `/presets/${id}`,
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
    // Changes only unless asked: sign-ins, turns and exports would bury them.
    changesOnly: params.show !== 'all',
  })
  const everything = params.show === 'all'

  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every change anyone made: who, what, and what changed (hover a name for its id)."
      />
      {/* Keyed by the query: a link that changes it (Show everything) shows the new values in the fields. */}
      <form key={JSON.stringify(params)} role="search" className="mb-4 flex flex-wrap gap-2 text-sm">
        {[
          ['action', 'Action starts with (e.g. user.)'],
          ['actor', 'Actor email contains'],
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
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Resource type</span>
          <select
            name="resourceType"
            defaultValue={params.resourceType ?? ''}
            className="rounded-md border border-stone-300 bg-white px-3 py-1.5"
          >
            <option value="">any</option>
            {data.resourceTypes.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Show</span>
          <select
            name="show"
            defaultValue={everything ? 'all' : ''}
            className="rounded-md border border-stone-300 bg-white px-3 py-1.5"
          >
            <option value="">Changes only</option>
            <option value="all">Everything (with sign-ins, turns and exports)</option>
          </select>
        </label>
        <button type="submit" className="self-end rounded-md border border-stone-300 bg-white px-3 py-1.5">
          Filter
        </button>
      </form>
      {everything ? null : (
        <p className="mb-3 text-sm text-stone-600" data-testid="changes-only">
          Changes only: sign-ins, turns in sessions and exports are left out.{' '}
          <Link
            href={`/admin/audit?${new URLSearchParams({ ...definedParams(params), show: 'all', page: '1' })}`}
            className="text-brand-700 underline"
          >
            Show everything
          </Link>
        </p>
      )}
      {data.total === 0 ? (
        <EmptyState title="No audit entries match." />
      ) : (
        <>
          <Table caption="Audit entries" head={['When', 'Who', 'Action', 'Resource', 'Study', 'Change']}>
            {data.items.map((e) => (
              <tr key={e.id}>
                <Td className="whitespace-nowrap text-stone-500">{formatDate(e.createdAt)}</Td>
                <Td>
                  {e.actorUserId ? (
                    <Named name={e.actorName ?? e.actorEmail} id={e.actorUserId} />
                  ) : (
                    (e.actorEmail ?? 'system')
                  )}
                  <div className="text-xs text-stone-500">{e.via}</div>
                </Td>
                <Td className="font-mono text-xs">{e.action}</Td>
                <Td className="text-xs">
                  <div className="text-stone-500">{e.resourceType}</div>
                  <Named name={e.resourceName} id={e.resourceId} href={HREF[e.resourceType]?.(e.resourceId)} />
                </Td>
                <Td className="text-xs">
                  <Named name={e.studyName} id={e.studyId} href={e.studyId ? `/studies/${e.studyId}` : undefined} />
                </Td>
                <Td>
                  <AuditDiff before={e.before} after={e.after} />
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
