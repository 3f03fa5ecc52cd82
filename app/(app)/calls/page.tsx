import { formatCount, formatUsd } from '@/lib/format'
import type { Metadata } from 'next'
import Link from 'next/link'
import { Badge, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { db } from '@/lib/server/db'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listCalls } from '@/lib/server/services/llm'
import { studiesWhere } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'Calls' }

export default async function CallsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('calls:read')
  const params = await flatParams(searchParams)
  const data = await loadForPage(listCalls, {
    page: params.page,
    studyId: params.studyId,
    model: params.model,
    status: params.status,
    from: params.from,
    to: params.to,
  })
  const studies = await db.study.findMany({
    where: studiesWhere(actor, 'read'),
    select: { id: true, name: true },
    orderBy: { name: 'asc' },
  })
  return (
    <>
      <PageHeader
        title="Calls"
        description="Every LLM call attempt: what was asked, what came back, tokens, latency and cost."
      />
      <form className="mb-4 flex flex-wrap items-end gap-2 text-sm" role="search">
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Study</span>
          <select
            name="studyId"
            defaultValue={params.studyId ?? ''}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          >
            <option value="">All</option>
            {studies.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Model</span>
          <input
            name="model"
            defaultValue={params.model}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          />
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">Status</span>
          <select
            name="status"
            defaultValue={params.status ?? ''}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          >
            <option value="">Any</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
          </select>
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">From</span>
          <input
            type="date"
            name="from"
            defaultValue={params.from}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          />
        </label>
        <label className="flex flex-col">
          <span className="text-xs text-stone-600">To</span>
          <input
            type="date"
            name="to"
            defaultValue={params.to}
            className="rounded-md border border-stone-300 bg-white px-2 py-1.5"
          />
        </label>
        <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1.5">
          Filter
        </button>
      </form>
      {data.total === 0 ? (
        <EmptyState title="No calls match.">
          Calls appear here as soon as a model is asked anything (try “Test connection” on the Models page).
        </EmptyState>
      ) : (
        <div className="space-y-6">
          <Table
            caption="Totals per study and model"
            head={['Study', 'Model', 'Calls', 'Tokens in', 'Tokens out', 'Cost']}
          >
            {data.totals.map((t) => (
              <tr key={`${t.studyId}-${t.model}`}>
                <Td>{t.studyName ?? 'no study'}</Td>
                <Td className="font-mono text-xs">{t.model}</Td>
                <Td>{formatCount(t.calls)}</Td>
                <Td>{formatCount(t.tokensIn)}</Td>
                <Td>{formatCount(t.tokensOut)}</Td>
                <Td>{formatUsd(t.costUsd)}</Td>
              </tr>
            ))}
          </Table>
          <div>
            <Table
              caption="Calls"
              head={['When', 'Model', 'Purpose', 'Status', 'Attempt', 'Tokens', 'Latency', 'Cost']}
            >
              {data.items.map((c) => (
                <tr key={c.id} className="hover:bg-stone-50">
                  <Td className="whitespace-nowrap">
                    <Link href={`/calls/${c.id}`} className="text-brand-700 underline">
                      {formatDate(c.createdAt)}
                    </Link>
                  </Td>
                  <Td className="font-mono text-xs">
                    {c.modelRequested}
                    {c.provider === 'demo' && (
                      <>
                        {' '}
                        <Badge tone="amber">simulated</Badge>
                      </>
                    )}
                  </Td>
                  <Td>{c.purpose}</Td>
                  <Td>
                    {c.status === 'ok' ? (
                      <Badge tone="green">ok</Badge>
                    ) : (
                      <Badge tone="red">{c.errorKind ?? 'error'}</Badge>
                    )}
                    {c.cached && (
                      <>
                        {' '}
                        <Badge>replayed</Badge>
                      </>
                    )}
                  </Td>
                  <Td>{c.attempt}</Td>
                  <Td>
                    {formatCount(c.tokensIn)} / {formatCount(c.tokensOut)}
                  </Td>
                  <Td>
                    {formatCount(c.latencyMs)} ms
                    {c.ttftMs !== null && (
                      <span className="text-stone-500"> (first token {formatCount(c.ttftMs)} ms)</span>
                    )}
                  </Td>
                  <Td>{formatUsd(c.costUsd)}</Td>
                </tr>
              ))}
            </Table>
            <Pagination {...data} params={params} basePath="/calls" />
          </div>
        </div>
      )}
    </>
  )
}
