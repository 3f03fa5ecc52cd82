import type { Metadata } from 'next'
import Link from 'next/link'
import { CreatePresetForm } from '@/components/llm/preset-forms'
import { Card, EmptyState, PageHeader } from '@/components/ui/card'
import { formatDate, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { loadForPage } from '@/lib/server/page-data'
import { listConnections, ownerOptions } from '@/lib/server/services/connections'
import { listPresets } from '@/lib/server/services/presets'

export const metadata: Metadata = { title: 'Model presets' }

export default async function PresetsPage() {
  const { actor } = await requirePage('connections:manage')
  const [presets, connections] = await Promise.all([loadForPage(listPresets, {}), loadForPage(listConnections, {})])
  const owners = await ownerOptions(actor)
  return (
    <>
      <PageHeader
        title="Model presets"
        description="An agent configuration: model, sampling, system prompt and output format. Editing one makes a new version; sessions keep the version they used."
      />
      <div className="space-y-6">
        {presets.length === 0 ? (
          <EmptyState title="No presets yet.">
            Create one below, e.g. a generator and a temperature-0 checker.
          </EmptyState>
        ) : (
          <Table caption="Presets" head={['Name', 'Latest version', 'Model', 'Available to', 'Updated']}>
            {presets.map((p) => (
              <tr key={p.id}>
                <Td>
                  <Link href={`/presets/${p.id}`} className="font-medium text-brand-700 underline">
                    {p.name}
                  </Link>
                </Td>
                <Td>v{p.versions[0]?.version}</Td>
                <Td className="font-mono text-xs">
                  {p.versions[0]?.model} via {p.versions[0]?.connection.name}
                </Td>
                <Td>{p.study?.name ?? 'everyone'}</Td>
                <Td className="text-stone-500">{formatDate(p.updatedAt)}</Td>
              </tr>
            ))}
          </Table>
        )}
        <Card title="New preset">
          {owners.length ? (
            <CreatePresetForm connections={connections.map((c) => ({ value: c.id, label: c.name }))} owners={owners} />
          ) : (
            <p className="text-sm text-stone-600">Join a study first.</p>
          )}
        </Card>
      </div>
    </>
  )
}
