import type { Metadata } from 'next'
import Link from 'next/link'
import { Structure } from '@/components/datasets/structure'
import { PageHeader } from '@/components/ui/card'
import { Pagination, Table, Td } from '@/components/ui/table'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { getDataset } from '@/lib/server/services/datasets'
import { findDatasetKind } from '@/lib/server/services/dataset-kinds'
import { sourceIdOf } from '@/lib/tasks/datasets'

export const metadata: Metadata = { title: 'Dataset' }

/**
 * A dataset's instances: where each came from in the source file (its data row and the file's own
 * id, e.g. a `case` column), the input (an image, a molecule drawn by RDKit, or the fields), the
 * ground truth (drawn as a molecule when the dataset's kind says so) and the explanation, opened in
 * full with the row's other columns. The kind (its label, how it shows a prediction) is its plugin's.
 */
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
  const kind = await findDatasetKind(dataset.kind)
  const molecules = kind?.show?.prediction === 'molecule'
  return (
    <>
      <PageHeader
        title={dataset.name}
        description={`${kind?.label ?? dataset.kind.toUpperCase()} · ${dataset.status === 'ready' ? `${instances.total} instances` : dataset.status === 'importing' ? 'importing' : 'import failed'} · from ${dataset.source}`}
        actions={
          <Link href={`/studies/${dataset.studyId}`} className="text-sm text-brand-700 underline">
            ← {dataset.study.name}
          </Link>
        }
      />
      <p className="mb-3 text-sm text-stone-600">
        <em>Row</em> is the data row of {dataset.source} (the header not counted) and <em>Source id</em> the file's own
        id column where it has one; the runs' D export carries both (<code>sourceRow</code>, <code>sourceId</code>) to
        join results back to the file.
      </p>
      <Table caption="Instances" head={['Row', 'Source id', 'Input (x)', 'Prediction (y)', 'Explanation (e)']}>
        {instances.items.map((i) => {
          const input = i.input as Record<string, unknown>
          const meta = (i.meta ?? {}) as Record<string, unknown>
          const sourceId = sourceIdOf(meta)
          return (
            <tr key={i.id} data-row={i.index + 1}>
              <Td className="text-stone-500">{i.index + 1}</Td>
              <Td className="font-mono text-xs">
                <span data-testid="source-id">{sourceId ?? '—'}</span>
              </Td>
              <Td>
                {typeof input.image === 'string' ? (
                  <img
                    src={`/api/assets/${dataset.id}/${encodeURIComponent(input.image)}`}
                    alt={`X-ray ${input.image}`}
                    loading="lazy"
                    className="h-24 w-24 rounded object-cover"
                  />
                ) : typeof input.smiles === 'string' ? (
                  <Structure smiles={input.smiles} label="Product" />
                ) : (
                  <code className="break-all text-xs">{JSON.stringify(input)}</code>
                )}
              </Td>
              <Td className="max-w-xs break-all">
                {molecules && i.prediction ? <Structure smiles={i.prediction} label="Reactants" /> : i.prediction}
              </Td>
              <Td className="max-w-md">
                <details data-testid="row-detail">
                  <summary className="cursor-pointer list-none">
                    <p className="line-clamp-4 text-xs text-stone-700">{i.explanation || '—'}</p>
                    <span className="text-xs text-brand-700 underline">Full row</span>
                  </summary>
                  <div className="mt-2 space-y-2 text-xs">
                    <p className="whitespace-pre-wrap text-stone-800" data-testid="full-explanation">
                      {i.explanation}
                    </p>
                    {Object.keys(meta).length ? (
                      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-stone-600">
                        {Object.entries(meta).map(([k, v]) => (
                          <div key={k} className="contents">
                            <dt className="font-medium">{k}</dt>
                            <dd className="break-all">{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
                          </div>
                        ))}
                      </dl>
                    ) : null}
                  </div>
                </details>
              </Td>
            </tr>
          )
        })}
      </Table>
      <Pagination {...instances} params={sp} basePath={`/datasets/${dataset.id}`} />
    </>
  )
}
