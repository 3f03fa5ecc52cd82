import type { Metadata } from 'next'
import Link from 'next/link'
import { NewExperimentForm } from '@/components/experiments/new-experiment-form'
import { modelChoices } from '@/components/experiments/model-choices'
import { StudyChooser } from '@/components/studies/study-chooser'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { listDatasets } from '@/lib/server/services/datasets'
import { listPresets } from '@/lib/server/services/presets'
import { listTaskTemplates } from '@/lib/server/services/task-templates'
import { getStudy } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'New experiment' }

export default async function NewExperimentPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:update')
  const { studyId } = await flatParams(searchParams)
  if (!studyId) return <StudyChooser actor={actor} title="New experiment" thing="experiment" href="/experiments/new" />
  const study = await loadForPage(getStudy, { studyId })
  const [datasets, connections, presets, templates] = await Promise.all([
    loadForPage(listDatasets, { studyId }),
    loadForPage(listConnections, { studyId }),
    loadForPage(listPresets, { studyId }),
    loadForPage(listTaskTemplates, { studyId }),
  ])
  const models = modelChoices(presets, connections)
  // Only imported datasets: one still importing (or failed) has no instances to run on yet.
  const pxpDatasets = datasets
    .filter((d) => d.status === 'ready')
    .map((d) => ({
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
