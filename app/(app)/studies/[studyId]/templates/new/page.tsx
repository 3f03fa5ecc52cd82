import type { Metadata } from 'next'
import Link from 'next/link'
import { TemplateForm } from '@/components/templates/template-form'
import { Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { loadForPage } from '@/lib/server/page-data'
import { getStudy } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'New task template' }

export default async function NewTemplatePage({ params }: { params: Promise<{ studyId: string }> }) {
  const { studyId } = await params
  await requirePage('studies:update')
  const study = await loadForPage(getStudy, { studyId })
  return (
    <>
      <PageHeader
        title="New task template"
        description={
          <>
            A generic PXP task for{' '}
            <Link href={`/studies/${study.id}`} className="text-brand-700 underline">
              {study.name}
            </Link>
            : experiments over a generic dataset use it to prompt the machine, parse its answers, MATCH predictions and
            ask the checker whether explanations AGREE. Templates never change once saved; save a new one instead.
          </>
        }
      />
      <Card>
        <TemplateForm studyId={study.id} />
      </Card>
    </>
  )
}
