import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { uiFor } from '@/components/protocols/registry'
import { loadForPage } from '@/lib/server/page-data'
import { protocolPage } from '@/lib/server/services/protocol-pages'

interface Params {
  studyId: string
  protocol: string
  path: string[]
}
type Search = Record<string, string | string[] | undefined>

/** The URL's search parameters as one string each (a repeated parameter: its first value). */
function argsOf(search: Search): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(search)) {
    const value = Array.isArray(v) ? v[0] : v
    if (value !== undefined) out[k] = value
  }
  return out
}

const load = async ({ studyId, protocol, path }: Params, search: Search) =>
  loadForPage(protocolPage, {
    studyId,
    protocol,
    path: path.map((p) => decodeURIComponent(p)),
    args: argsOf(search),
  })

export async function generateMetadata({
  params,
  searchParams,
}: {
  params: Promise<Params>
  searchParams: Promise<Search>
}): Promise<Metadata> {
  const p = await params
  if (!uiFor(p.protocol)?.StudyPage) return { title: 'Not found' }
  return { title: (await load(p, await searchParams)).title }
}

/** A protocol's own page under a study (PXP's task templates …): its plugin's data, its UI's page. */
export default async function ProtocolStudyPage({
  params,
  searchParams,
}: {
  params: Promise<Params>
  searchParams: Promise<Search>
}) {
  const p = await params
  const ui = uiFor(p.protocol)
  if (!ui?.StudyPage) notFound()
  const page = await load(p, await searchParams)
  return <ui.StudyPage study={page.study} path={p.path} title={page.title} data={page.data} />
}
