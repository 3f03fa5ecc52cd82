import type { Metadata } from 'next'
import { CompleteWorkForm } from '@/components/work/complete-form'
import Link from 'next/link'
import { Markdown } from '@/components/ui/markdown'
import { Alert, Badge, Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { loadForPage } from '@/lib/server/page-data'
import { getWork } from '@/lib/server/services/work'

export const metadata: Metadata = { title: 'Work item' }

export default async function WorkItemPage({ params }: { params: Promise<{ workId: string }> }) {
  const { workId } = await params
  const { actor } = await requirePage('work:read-own')
  const work = await loadForPage(getWork, { workId })
  const mine = work.userId === actor.userId
  return (
    <div className="max-w-3xl">
      <PageHeader
        title={work.title}
        description={
          <>
            {work.study.name} ·{' '}
            <Badge tone={work.status === 'done' ? 'green' : 'amber'}>{work.status.replace('_', ' ')}</Badge>
            {!mine && <> · assigned to {work.user.email}</>}
          </>
        }
      />
      <div className="space-y-4">
        <Card title="Instructions">
          <p className="whitespace-pre-wrap text-sm">{work.instructions || 'No instructions.'}</p>
        </Card>
        <details className="rounded-lg border border-stone-200 bg-white px-5 py-3 text-sm">
          <summary className="cursor-pointer font-medium">Study guidelines</summary>
          {work.study.guidelines ? (
            <Markdown className="mt-2">{work.study.guidelines}</Markdown>
          ) : (
            <p className="mt-2">This study has no guidelines yet.</p>
          )}
        </details>
        {mine && work.status !== 'done' && <CompleteWorkForm workId={work.id} />}
        {mine && work.status === 'done' && (
          <Alert tone="success">
            You marked this done.{' '}
            <Link href="/work?status=open" className="underline">
              Back to your open work
            </Link>
          </Alert>
        )}
      </div>
    </div>
  )
}
