import type { Metadata } from 'next'
import { DeletePriceForm, PriceForm } from '@/components/llm/price-forms'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { loadForPage } from '@/lib/server/page-data'
import { listPrices } from '@/lib/server/services/llm'

export const metadata: Metadata = { title: 'Model prices' }

export default async function PricesPage() {
  await requirePage('prices:manage')
  const prices = await loadForPage(listPrices, {})
  return (
    <div className="max-w-4xl space-y-6">
      <PageHeader
        title="Model prices"
        description="US dollars per million tokens. A call's cost uses the exact model name, else the longest matching prefix (gpt-4o*). Calls without a price show no cost."
      />
      <Card title="Set a price">
        <PriceForm />
      </Card>
      {prices.length === 0 ? (
        <EmptyState title="No prices yet." />
      ) : (
        <Table caption="Prices" head={['Model', 'Input $/1M', 'Output $/1M', 'Updated', '']}>
          {prices.map((p) => (
            <tr key={p.id}>
              <Td className="font-mono text-xs">{p.model}</Td>
              <Td>{p.inputPerMTok}</Td>
              <Td>{p.outputPerMTok}</Td>
              <Td className="text-stone-500">{formatDate(p.updatedAt)}</Td>
              <Td>
                <DeletePriceForm priceId={p.id} model={p.model} />
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  )
}
