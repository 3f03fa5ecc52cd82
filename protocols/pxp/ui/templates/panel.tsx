import Link from 'next/link'
import type { StudyPanelProps } from '@/components/protocols/types'
import { Card, EmptyState } from '@/components/ui/card'
import { formatDate } from '@/components/ui/table'

interface PanelData {
  templates: Array<{ id: string; name: string; createdAt: Date | string }>
  canWrite: boolean
}

/** PXP's card on a study page: the study's generic task templates. */
export function PxpTemplatesPanel({ studyId, data }: StudyPanelProps) {
  const { templates, canWrite } = data as PanelData
  const base = `/studies/${studyId}/p/pxp/templates`
  return (
    <Card
      title="Task templates"
      description="Generic PXP tasks: prompts, output fields, labels, MATCH and AGREE, for generic datasets."
      actions={
        canWrite ? (
          <Link href={`${base}/new`} className="text-sm text-brand-700 underline">
            New template
          </Link>
        ) : undefined
      }
    >
      {templates.length === 0 ? (
        <EmptyState title="No task templates yet." />
      ) : (
        <ul className="divide-y divide-stone-100 text-sm">
          {templates.map((t) => (
            <li key={t.id} className="flex items-center justify-between py-2">
              <Link href={`${base}/${t.id}`} className="font-medium text-brand-700 underline">
                {t.name}
              </Link>
              <span className="text-stone-500">{formatDate(t.createdAt)}</span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  )
}
