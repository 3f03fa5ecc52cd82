import type { Metadata } from 'next'
import Link from 'next/link'
import { ImportSessionsForm } from '@/components/runs/import-sessions-form'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { maxUploadMb } from '@/lib/limits.mjs'
import { requirePage } from '@/lib/server/auth/session'
import { loadForPage } from '@/lib/server/page-data'
import { listRunImportKinds } from '@/lib/server/services/session-import'
import { getStudy } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'Import trajectories' }

/**
 * Import a file of finished sessions (trajectories played elsewhere) as a run of the study, in any kind
 * the protocols declare. Writing needs the study's write role; the operation checks it again.
 */
export default async function ImportRunsPage({ params }: { params: Promise<{ studyId: string }> }) {
  const { studyId } = await params
  await requirePage('studies:update')
  const study = await loadForPage(getStudy, { studyId })
  const kinds = await loadForPage(listRunImportKinds, { studyId })
  const canWrite = study.access.includes('write')
  return (
    <>
      <PageHeader
        title="Import trajectories"
        description={
          <>
            Finished sessions from a file become a run of{' '}
            <Link href={`/studies/${study.id}`} className="underline">
              {study.name}
            </Link>
            , marked imported, with their dashboards and exports.
          </>
        }
      />
      <Card title="A file of sessions">
        {!canWrite ? (
          <EmptyState title="Your role in this study does not let you add runs." />
        ) : kinds.length === 0 ? (
          <EmptyState title="No protocol imports sessions from files." />
        ) : (
          <ImportSessionsForm studyId={study.id} maxUploadMb={maxUploadMb()} kinds={kinds} />
        )}
      </Card>
      <p className="mt-4 text-sm">
        <Link href={`/runs?studyId=${study.id}`} className="text-brand-700 underline">
          The study’s runs
        </Link>
      </p>
    </>
  )
}
