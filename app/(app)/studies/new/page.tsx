import type { Metadata } from 'next'
import { CreateStudyForm } from '@/components/studies/study-forms'
import { Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { PROTOCOL_LABELS } from '@/lib/server/services/studies'

export const metadata: Metadata = { title: 'New study' }

export default async function NewStudyPage() {
  await requirePage('studies:create')
  return (
    <div className="max-w-2xl">
      <PageHeader
        title="New study"
        description="You become the study's first member; add experts and annotators next."
      />
      <Card>
        <CreateStudyForm protocols={PROTOCOL_LABELS} />
      </Card>
    </div>
  )
}
