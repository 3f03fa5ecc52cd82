import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { uiFor } from '@/components/protocols/registry'
import { loadForPage } from '@/lib/server/page-data'
import { protocolPage } from '@/lib/server/services/protocol-pages'
import { getStudy } from '@/lib/server/services/studies'

interface Params {
  studyId: string
  protocol: string
  path: string[]
}

const load = async ({ studyId, protocol, path }: Params) =>
  loadForPage(protocolPage, { studyId, protocol, path: path.map((p) => decodeURIComponent(p)) })

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  const p = await params
  if (!uiFor(p.protocol)?.StudyPage) return { title: 'Not found' }
  return { title: (await load(p)).title }
}

/** A protocol's own page under a study (PXP's task templates …): its plugin's data, its UI's page. */
export default async function ProtocolStudyPage({ params }: { params: Promise<Params> }) {
  const p = await params
  const ui = uiFor(p.protocol)
  if (!ui?.StudyPage) notFound()
  const [study, page] = await Promise.all([loadForPage(getStudy, { studyId: p.studyId }), load(p)])
  return <ui.StudyPage study={{ id: study.id, name: study.name }} path={p.path} title={page.title} data={page.data} />
}
