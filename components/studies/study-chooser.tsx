import Link from 'next/link'
import { EmptyState, PageHeader } from '@/components/ui/card'
/**
 * The first step of a "new … in a study" page: pick one of the active studies the actor may write to
 * (the page loads them with `studies.list`, need = write).
 */
export function StudyChooser({
  studies,
  title,
  thing,
  href,
}: {
  studies: ReadonlyArray<{ id: string; name: string }>
  title: string
  thing: string
  href: string
}) {
  return (
    <>
      <PageHeader title={title} description={`Choose the study the ${thing} belongs to.`} />
      {studies.length === 0 ? (
        <EmptyState title="No studies yet.">
          <Link href="/studies/new" className="text-brand-700 underline">
            Create a study
          </Link>{' '}
          first.
        </EmptyState>
      ) : (
        <ul className="max-w-xl divide-y divide-stone-100 rounded-lg border border-stone-200 bg-white">
          {studies.map((s) => (
            <li key={s.id}>
              <Link href={`${href}?studyId=${s.id}`} className="block px-4 py-2 hover:bg-stone-50">
                {s.name}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
