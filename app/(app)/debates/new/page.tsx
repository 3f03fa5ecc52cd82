import type { Metadata } from 'next'
import Link from 'next/link'
import { NewDebateForm } from '@/components/debates/new-debate-form'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { db } from '@/lib/server/db'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { listDatasets } from '@/lib/server/services/datasets'
import { listPresets } from '@/lib/server/services/presets'
import { getStudy, visibleStudies } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'New debate' }

export default async function NewDebatePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:update')
  const { studyId } = await flatParams(searchParams)
  if (!studyId) {
    const studies = await db.study.findMany({
      where: { ...visibleStudies(actor), archivedAt: null },
      select: { id: true, name: true },
      orderBy: { name: 'asc' },
    })
    return (
      <>
        <PageHeader title="New debate" description="Choose the study the debate belongs to." />
        {studies.length === 0 ? (
          <EmptyState title="No studies yet.">
            <Link href="/studies/new" className="text-brand-700 hover:underline">
              Create a study
            </Link>{' '}
            first.
          </EmptyState>
        ) : (
          <ul className="max-w-xl divide-y divide-stone-100 rounded-lg border border-stone-200 bg-white">
            {studies.map((s) => (
              <li key={s.id}>
                <Link href={`/debates/new?studyId=${s.id}`} className="block px-4 py-2 hover:bg-stone-50">
                  {s.name}
                </Link>
              </li>
            ))}
          </ul>
        )}
      </>
    )
  }
  const study = await loadForPage(getStudy, { studyId })
  const [datasets, connections, presets] = await Promise.all([
    loadForPage(listDatasets, { studyId }),
    loadForPage(listConnections, { studyId }),
    loadForPage(listPresets, { studyId }),
  ])
  const models = [
    ...presets.flatMap((p) => {
      const v = p.versions[0]
      if (!v) return []
      const ref = {
        connectionId: v.connectionId,
        model: v.model,
        ...(v.temperature !== null ? { temperature: v.temperature } : {}),
      }
      return [{ value: JSON.stringify(ref), label: `Preset: ${p.name} (${v.model}, v${v.version})` }]
    }),
    ...connections.map((c) => ({
      value: JSON.stringify({ connectionId: c.id }),
      label: `Connection: ${c.name} (${c.defaultModel})${c.provider === 'demo' ? ' — simulated' : ''}`,
    })),
  ]
  const caseSets = datasets
    .filter((d) => d.kind === 'cases')
    .map((d) => ({ value: d.id, label: `${d.name} · ${d._count.instances} cases` }))
  const experts = study.members
    .filter((m) => m.role !== 'viewer')
    .map((m) => ({ value: m.user.id, label: `${m.user.name} (${m.user.email}, ${m.role})` }))
  return (
    <>
      <PageHeader
        title="New EVINCE debate"
        description={
          <>
            In{' '}
            <Link href={`/studies/${study.id}`} className="text-brand-700 hover:underline">
              {study.name}
            </Link>
            : two debaters predict top-k diagnoses round by round at a falling contentiousness; the moderator scores
            their arguments (CRIT), combines the final distributions and reports what information is missing.
          </>
        }
      />
      {models.length === 0 ? (
        <EmptyState title="No model to debate with.">Add an LLM connection first.</EmptyState>
      ) : (
        <Card>
          <NewDebateForm studyId={study.id} caseSets={caseSets} models={models} experts={experts} />
        </Card>
      )}
    </>
  )
}
