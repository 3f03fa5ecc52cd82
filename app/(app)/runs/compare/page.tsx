import type { Metadata } from 'next'
import Link from 'next/link'
import { forbidden, notFound } from 'next/navigation'
import { protocolLabel, uiFor } from '@/components/protocols/registry'
import { StatusBadge } from '@/components/runs/status'
import { Alert, Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { execute } from '@/lib/server/operation'
import { flatParams } from '@/lib/server/page-data'
import { compareRuns, listRuns } from '@/lib/server/services/runs'

export const metadata: Metadata = { title: 'Compare runs' }

type RunOption = { id: string; name: string; protocol: string; study: { name: string } }

function RunSelect({ name, label, runs, value }: { name: string; label: string; runs: RunOption[]; value?: string }) {
  return (
    <label className="flex min-w-72 flex-col text-sm">
      <span className="text-xs text-stone-600">{label}</span>
      <select
        name={name}
        defaultValue={value ?? ''}
        className="rounded-md border border-stone-300 bg-white px-3 py-1.5"
        required
      >
        <option value="" disabled>
          Choose a run…
        </option>
        {runs.map((r) => (
          <option key={r.id} value={r.id}>
            {r.name} · {protocolLabel(r.protocol)} · {r.study.name}
          </option>
        ))}
      </select>
    </label>
  )
}

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
  const all = await execute(listRuns, actor, { pageSize: 100 })
  if (!all.ok) throw new Error(all.error)
  const runA = sp.a ? all.data.items.find((r) => r.id === sp.a) : undefined
  const comparable = all.data.items.filter((r) => uiFor(r.protocol)?.Compare)
  const choicesB = runA ? comparable.filter((r) => r.protocol === runA.protocol && r.id !== runA.id) : comparable

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
        <form className="flex flex-wrap items-end gap-3" action="/runs/compare">
          <RunSelect name="a" label="Run A" runs={comparable} value={sp.a} />
          <RunSelect name="b" label="Run B (same protocol)" runs={choicesB} value={sp.b} />
          <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm">
            Compare
          </button>
          {sp.a && sp.b ? (
            <Link href={`/runs/compare?a=${sp.b}&b=${sp.a}`} className="self-center text-sm text-brand-700 underline">
              Swap A and B
            </Link>
          ) : null}
        </form>
        {runA && !choicesB.length ? (
          <p className="mt-2 text-sm text-stone-500">
            No other {protocolLabel(runA.protocol)} run to compare with yet.
          </p>
        ) : null}
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
