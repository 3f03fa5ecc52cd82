import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { uiFor } from '@/components/protocols/registry'
import { modelChoices } from '@/components/runs/model-choices'
import { StudyChooser } from '@/components/studies/study-chooser'
import { Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { listDatasets } from '@/lib/server/services/datasets'
import { listPresets } from '@/lib/server/services/presets'
import { getStudy, listStudies } from '@/lib/server/services/studies'
import { setupFormData } from '@/lib/server/services/protocol-pages'

export const metadata: Metadata = { title: 'New run' }

/** Step two: the study, then the protocol's own set-up form with the study's data, models and people. */
export default async function NewProtocolRunPage({
  params,
  searchParams,
}: {
  params: Promise<{ protocol: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  await requirePage('studies:update')
  const { protocol } = await params
  const ui = uiFor(protocol)
  if (!ui) notFound()
  const { studyId } = await flatParams(searchParams)
  if (!studyId) {
    const writable = await loadForPage(listStudies, { need: 'write', pageSize: 100 })
    const studies = [...writable.items].sort((a, b) => a.name.localeCompare(b.name))
    return <StudyChooser studies={studies} title={ui.newRun.title} thing="run" href={`/runs/new/${protocol}`} />
  }
  const study = await loadForPage(getStudy, { studyId })
  const [datasets, connections, presets, setup] = await Promise.all([
    loadForPage(listDatasets, { studyId }),
    loadForPage(listConnections, { studyId }),
    loadForPage(listPresets, { studyId }),
    loadForPage(setupFormData, { studyId, protocol }),
  ])
  const experts = study.members
    .filter((m) => m.role !== 'viewer')
    .map((m) => ({ value: m.user.id, label: `${m.user.name} (${m.user.email}, ${m.role})` }))
  return (
    <>
      <PageHeader
        title={ui.newRun.title}
        description={
          <>
            In{' '}
            <Link href={`/studies/${study.id}`} className="text-brand-700 underline">
              {study.name}
            </Link>
            : {ui.newRun.intro}
          </>
        }
      />
      <Card>
        <ui.SetupForm
          studyId={study.id}
          protocol={protocol}
          datasets={datasets.map((d) => ({ id: d.id, name: d.name, kind: d.kind, instances: d._count.instances }))}
          models={modelChoices(presets, connections)}
          experts={experts}
          extra={setup.extra}
        />
      </Card>
    </>
  )
}
