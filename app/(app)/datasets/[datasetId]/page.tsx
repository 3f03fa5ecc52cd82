import type { Metadata } from 'next'
import Link from 'next/link'
import { PageHeader } from '@/components/ui/card'
import { Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { getDataset } from '@/lib/server/services/datasets'

export const metadata: Metadata = { title: 'Dataset' }

export default async function DatasetPage({
  params,
  searchParams,
}: {
  params: Promise<{ datasetId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { datasetId } = await params
  const sp = await flatParams(searchParams)
  const { dataset, instances } = await loadForPage(getDataset, { datasetId, page: sp.page, pageSize: 20 })
  return (
    <>
      <PageHeader
        title={dataset.name}
        description={`${dataset.kind.toUpperCase()} · ${dataset.status === 'ready' ? `${instances.total} instances` : dataset.status === 'importing' ? 'importing' : 'import failed'} · from ${dataset.source}`}
        actions={
          <Link href={`/studies/${dataset.studyId}`} className="text-sm text-brand-700 underline">
            ← {dataset.study.name}
          </Link>
        }
      />
      <Table caption="Instances" head={['#', 'Input (x)', 'Prediction (y)', 'Explanation (e)']}>
        {instances.items.map((i) => {
          const input = i.input as Record<string, unknown>
          return (
            <tr key={i.id}>
              <Td className="text-stone-500">{i.index + 1}</Td>
              <Td>
                {typeof input.image === 'string' ? (
                  <img
                    src={`/api/assets/${dataset.id}/${encodeURIComponent(input.image)}`}
                    alt={`X-ray ${input.image}`}
                    loading="lazy"
                    className="h-24 w-24 rounded object-cover"
                  />
                ) : typeof input.smiles === 'string' ? (
                  <code className="break-all text-xs">{input.smiles}</code>
                ) : (
                  <code className="break-all text-xs">{JSON.stringify(input)}</code>
                )}
              </Td>
              <Td className="max-w-xs break-all">{i.prediction}</Td>
              <Td className="max-w-md">
                <p className="line-clamp-4 text-xs text-stone-700">{i.explanation}</p>
              </Td>
            </tr>
          )
        })}
      </Table>
      <Pagination {...instances} params={sp} basePath={`/datasets/${dataset.id}`} />
    </>
  )
}
