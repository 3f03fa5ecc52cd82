import type { Metadata } from 'next'
import Link from 'next/link'
import { runnableProtocols } from '@/components/protocols/registry'
import { PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams } from '@/lib/server/page-data'

export const metadata: Metadata = { title: 'New run' }

/** Step one of a new run: the protocol (every registered one), then the study and its set-up. */
export default async function NewRunPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  await requirePage('studies:update')
  const { studyId } = await flatParams(searchParams)
  const query = studyId ? `?studyId=${encodeURIComponent(studyId)}` : ''
  return (
    <>
      <PageHeader title="New run" description="Choose the protocol the run follows." />
      <ul className="grid max-w-4xl gap-4 sm:grid-cols-2" aria-label="Protocols">
        {runnableProtocols().map((p) => (
          <li key={p.id}>
            <Link
              href={`/runs/new/${p.id}${query}`}
              className="block h-full rounded-lg border border-stone-200 bg-white p-4 shadow-sm hover:border-brand-600"
            >
              <span className="block text-base font-semibold text-brand-700">{p.label}</span>
              <span className="mt-1 block text-sm text-stone-600">{p.ui.description}</span>
            </Link>
          </li>
        ))}
      </ul>
    </>
  )
}
