import type { Metadata } from 'next'
import Link from 'next/link'
import { forbidden, notFound } from 'next/navigation'
import { protocolLabel, uiFor } from '@/components/protocols/registry'
import { CompareForm } from '@/components/runs/compare-form'
import { StatusBadge } from '@/components/runs/status'
import { Alert, Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { execute } from '@/lib/server/operation'
import { flatParams } from '@/lib/server/page-data'
import { compareChoices, compareRuns } from '@/lib/server/services/runs'

export const metadata: Metadata = { title: 'Compare runs' }

/**
 * Two runs side by side, for every protocol whose UI has a `Compare` (the plugin's `views.compare`
 * computes it): choose A, then B among the runs of the same protocol, e.g. the same set-up with
 * another model.
 */
export default async function CompareRunsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('dashboards:read')
  const sp = await flatParams(searchParams)
  const all = await execute(compareChoices, actor, {})
  if (!all.ok) throw new Error(all.error)
  // Only runs that compare: B among the runs of A's protocol that its plugin says compare with A
  // (PXP: the same task), so a RAD run is never offered against a DRUG run.
  const comparable = all.data.filter((r) => uiFor(r.protocol)?.Compare)

  let result: { ok: true; data: Awaited<ReturnType<typeof compareRuns.run>> } | { ok: false; error: string } | null =
    null
  if (sp.a && sp.b) {
    const r = await execute(compareRuns, actor, { a: sp.a, b: sp.b })
    if (!r.ok && r.status === 404) notFound()
    if (!r.ok && r.status === 403) forbidden()
    result = r.ok ? r : { ok: false, error: r.error }
  }
  const ui = result?.ok ? uiFor(result.data.protocol) : null
  return (
    <>
      <PageHeader
        title="Compare runs"
        description="Two runs of one protocol side by side, with what changed from A to B (e.g. the same set-up with another model)."
      />
      <Card>
        <CompareForm key={`${sp.a}|${sp.b}`} runs={comparable} a={sp.a} b={sp.b} />
      </Card>
      {result && !result.ok ? (
        <div className="mt-4">
          <Alert>{result.error}</Alert>
        </div>
      ) : null}
      {result?.ok ? (
        <div className="mt-6 space-y-4">
          <p className="text-sm text-stone-600">
            {protocolLabel(result.data.protocol)} · A:{' '}
            <Link href={`/runs/${result.data.a.id}`} className="text-brand-700 underline">
              {result.data.a.name}
            </Link>{' '}
            <StatusBadge status={result.data.a.status} /> · B:{' '}
            <Link href={`/runs/${result.data.b.id}`} className="text-brand-700 underline">
              {result.data.b.name}
            </Link>{' '}
            <StatusBadge status={result.data.b.status} />
          </p>
          {ui?.Compare ? (
            <ui.Compare a={result.data.a} b={result.data.b} data={result.data.data} />
          ) : (
            <Alert tone="info">This protocol has no comparison yet.</Alert>
          )}
        </div>
      ) : null}
    </>
  )
}
