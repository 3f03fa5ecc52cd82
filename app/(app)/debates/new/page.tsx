import type { Metadata } from 'next'
import Link from 'next/link'
import { NewDebateForm } from '@/components/debates/new-debate-form'
import { modelChoices } from '@/components/experiments/model-choices'
import { StudyChooser } from '@/components/studies/study-chooser'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { listDatasets } from '@/lib/server/services/datasets'
import { listPresets } from '@/lib/server/services/presets'
import { getStudy } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'New debate' }

export default async function NewDebatePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('studies:update')
  const { studyId } = await flatParams(searchParams)
  if (!studyId) return <StudyChooser actor={actor} title="New debate" thing="debate" href="/debates/new" />
  const study = await loadForPage(getStudy, { studyId })
  const [datasets, connections, presets] = await Promise.all([
    loadForPage(listDatasets, { studyId }),
    loadForPage(listConnections, { studyId }),
    loadForPage(listPresets, { studyId }),
  ])
  const models = modelChoices(presets, connections)
  const caseSets = datasets
    .filter((d) => d.kind === 'cases' && d.status === 'ready')
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
