import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { Card, PageHeader } from '@/components/ui/card'
import { formatDate } from '@/components/ui/table'
import { loadForPage } from '@/lib/server/page-data'
import { getTaskTemplate } from '@/lib/server/services/task-templates'
import { genericPrompt, genericQuery, genericSystemPrompt } from '@/lib/tasks/generic'

export const metadata: Metadata = { title: 'Task template' }

export default async function TemplatePage({ params }: { params: Promise<{ studyId: string; templateId: string }> }) {
  const { studyId, templateId } = await params
  const t = await loadForPage(getTaskTemplate, { templateId })
  if (t.studyId !== studyId) notFound()
  const { spec } = t
  const fields = [...spec.queryPrompt.matchAll(/\{([A-Za-z0-9_ -]{1,60})\}/g)].map((m) => m[1] as string)
  const sample = Object.fromEntries(fields.map((f) => [f, `<${f}>`]))
  const preview = genericPrompt(spec, [], genericQuery(spec, sample))
  return (
    <>
      <PageHeader
        title={t.name}
        description={
          <>
            Task template of{' '}
            <Link href={`/studies/${t.study.id}`} className="text-brand-700 underline">
              {t.study.name}
            </Link>
            , saved {formatDate(t.createdAt)}.
          </>
        }
      />
      <div className="grid gap-6 xl:grid-cols-2">
        <Card title="Definition">
          <dl className="grid grid-cols-[10rem_1fr] gap-y-2 text-sm">
            <dt className="text-stone-500">Output fields</dt>
            <dd>
              {spec.predictionField} / {spec.explanationField}
            </dd>
            <dt className="text-stone-500">Labels</dt>
            <dd>{spec.labels.length ? spec.labels.join(', ') : 'free text'}</dd>
            <dt className="text-stone-500">MATCH</dt>
            <dd className="font-mono text-xs">{JSON.stringify(spec.match)}</dd>
            <dt className="text-stone-500">AGREE prompt</dt>
            <dd className="whitespace-pre-wrap">{spec.agreePrompt}</dd>
          </dl>
        </Card>
        <Card title="The machine's first prompt" description="With placeholders where an instance's fields go.">
          <p className="mb-1 text-xs font-medium text-stone-500">SYSTEM</p>
          <pre className="whitespace-pre-wrap rounded bg-stone-50 p-2 text-xs">{genericSystemPrompt(spec)}</pre>
          <p className="mb-1 mt-3 text-xs font-medium text-stone-500">USER</p>
          <pre className="whitespace-pre-wrap rounded bg-stone-50 p-2 text-xs">{String(preview.at(-1)?.content)}</pre>
        </Card>
      </div>
    </>
  )
}
