import Link from 'next/link'
import { TemplateForm } from '@/protocols/pxp/ui/templates/form'
import type { StudyPageProps } from '@/components/protocols/types'
import { Card, PageHeader } from '@/components/ui/card'
import { formatDate } from '@/components/ui/table'
import { genericPrompt, genericQuery, genericSystemPrompt, type TaskTemplate } from '@/lib/tasks/generic'

type PageData =
  | { page: 'new' }
  | { page: 'template'; template: { id: string; name: string; createdAt: Date | string; spec: TaskTemplate } }

/** PXP's pages under a study: a new task template, and one template with its first prompt. */
export function PxpStudyPage({ study, data }: StudyPageProps) {
  const d = data as PageData
  const studyLink = (
    <Link href={`/studies/${study.id}`} className="text-brand-700 underline">
      {study.name}
    </Link>
  )
  if (d.page === 'new')
    return (
      <>
        <PageHeader
          title="New task template"
          description={
            <>
              A generic PXP task for {studyLink}: experiments over a generic dataset use it to prompt the machine, parse
              its answers, MATCH predictions and ask the checker whether explanations AGREE. Templates never change once
              saved; save a new one instead.
            </>
          }
        />
        <Card>
          <TemplateForm studyId={study.id} />
        </Card>
      </>
    )
  const t = d.template
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
            Task template of {studyLink}, saved {formatDate(t.createdAt)}.
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
