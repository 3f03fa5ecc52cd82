import { redirectWithStudy } from '@/components/runs/old-urls'

/** An old URL (before the one engine): runs of every protocol are under /runs. */
export default async function OldUrl({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  await redirectWithStudy('/runs', searchParams)
}
