import { formatCount, formatUsd } from '@/lib/format'
import type { Metadata } from 'next'
import Link from 'next/link'
import { Badge, Card, PageHeader } from '@/components/ui/card'
import { ScrollRegion } from '@/components/ui/scroll-region'
import { formatDate } from '@/components/ui/table'
import { loadForPage } from '@/lib/server/page-data'
import { getCall } from '@/lib/server/services/llm'

export const metadata: Metadata = { title: 'Call' }

function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <ScrollRegion
      as="pre"
      label={label}
      className="max-h-[28rem] overflow-auto whitespace-pre-wrap break-words rounded bg-stone-50 p-3 font-mono text-xs"
    >
      {JSON.stringify(value, null, 2)}
    </ScrollRegion>
  )
}

export default async function CallPage({ params }: { params: Promise<{ callId: string }> }) {
  const { callId } = await params
  const c = await loadForPage(getCall, { callId })
  const rows: Array<[string, React.ReactNode]> = [
    ['When', formatDate(c.createdAt)],
    ['Connection', c.connection ? `${c.connection.name} (${c.provider})` : c.provider],
    ['Model requested', c.modelRequested],
    ['Model reported', c.modelReported ?? '—'],
    ['Purpose', c.purpose],
    ['Status', c.status === 'ok' ? 'ok' : `${c.errorKind ?? 'error'}${c.httpStatus ? ` (HTTP ${c.httpStatus})` : ''}`],
    ['Attempt', c.attempt],
    ['Tokens in / out', `${formatCount(c.tokensIn)} / ${formatCount(c.tokensOut)}`],
    ['Latency', `${c.latencyMs} ms${c.ttftMs !== null ? `, first token after ${c.ttftMs} ms` : ''}`],
    ['Cost', c.costUsd === null ? 'no price for this model' : formatUsd(c.costUsd)],
    ['Seed', c.seed ?? '—'],
    [
      'Prompt hash',
      <code key="h" className="text-xs">
        {c.promptHash}
      </code>,
    ],
  ]
  return (
    <div className="max-w-5xl space-y-6">
      <PageHeader
        title={
          <>
            Call {c.provider === 'demo' && <Badge tone="amber">simulated demo model</Badge>}{' '}
            {c.cached && <Badge>replayed from the log</Badge>}
          </>
        }
        actions={
          <Link href="/calls" className="text-sm text-brand-700 underline">
            ← All calls
          </Link>
        }
      />
      <Card title="Summary">
        <dl className="grid grid-cols-[10rem_1fr] gap-y-1 text-sm">
          {rows.map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="text-stone-500">{k}</dt>
              <dd className="break-all">{v}</dd>
            </div>
          ))}
        </dl>
      </Card>
      {c.error && (
        <Card title="Error">
          <p className="whitespace-pre-wrap text-sm text-red-800">{c.error}</p>
        </Card>
      )}
      <Card title="Request (exactly as sent)">
        <JsonBlock value={c.request} label="Request JSON" />
      </Card>
      <Card title="Response">
        {c.response ? (
          <JsonBlock value={c.response} label="Response JSON" />
        ) : (
          <p className="text-sm text-stone-500">No response.</p>
        )}
      </Card>
    </div>
  )
}
