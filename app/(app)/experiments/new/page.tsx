import type { Metadata } from 'next'
import Link from 'next/link'
import { type ModelChoice, NewExperimentForm } from '@/components/experiments/new-experiment-form'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { db } from '@/lib/server/db'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { listDatasets } from '@/lib/server/services/datasets'
import { listPresets } from '@/lib/server/services/presets'
import { listTaskTemplates } from '@/lib/server/services/task-templates'
import { getStudy, visibleStudies } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'New experiment' }

export default async function NewExperimentPage({
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
        <PageHeader title="New experiment" description="Choose the study the experiment belongs to." />
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
                <Link href={`/experiments/new?studyId=${s.id}`} className="block px-4 py-2 hover:bg-stone-50">
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
  const [datasets, connections, presets, templates] = await Promise.all([
    loadForPage(listDatasets, { studyId }),
    loadForPage(listConnections, { studyId }),
    loadForPage(listPresets, { studyId }),
    loadForPage(listTaskTemplates, { studyId }),
  ])
  const models: ModelChoice[] = [
    ...presets.flatMap((p) => {
      const v = p.versions[0]
      if (!v) return []
      const ref = {
        connectionId: v.connectionId,
        model: v.model,
        ...(v.temperature !== null ? { temperature: v.temperature } : {}),
        vision: v.vision,
      }
      return [{ value: JSON.stringify(ref), label: `Preset: ${p.name} (${v.model}, v${v.version})` }]
    }),
    ...connections.map((c) => ({
      value: JSON.stringify({ connectionId: c.id }),
      label: `Connection: ${c.name} (${c.defaultModel})${c.provider === 'demo' ? ' — simulated' : ''}`,
    })),
  ]
  const pxpDatasets = datasets.map((d) => ({
    value: d.id,
    label: `${d.name} · ${d.kind.toUpperCase()} · ${d._count.instances} instances`,
  }))
  const experts = study.members
    .filter((m) => m.role !== 'viewer')
    .map((m) => ({ value: m.user.id, label: `${m.user.name} (${m.user.email}, ${m.role})` }))
  return (
    <>
      <PageHeader
        title="New PXP experiment"
        description={
          <>
            In{' '}
            <Link href={`/studies/${study.id}`} className="text-brand-700 hover:underline">
              {study.name}
            </Link>
            : one session per instance and repetition; the machine and the tester exchange tagged predictions and
            explanations until both ratify, one rejects, or n messages are written.
          </>
        }
      />
      {datasets.length === 0 ? (
        <EmptyState title="This study has no dataset yet.">
          <Link href={`/studies/${study.id}`} className="text-brand-700 hover:underline">
            Import one on the study page
          </Link>
          .
        </EmptyState>
      ) : (
        <Card>
          <NewExperimentForm
            studyId={study.id}
            datasets={pxpDatasets}
            models={models}
            experts={experts}
            templates={templates.map((t) => ({ value: t.id, label: t.name }))}
          />
        </Card>
      )}
    </>
  )
}
