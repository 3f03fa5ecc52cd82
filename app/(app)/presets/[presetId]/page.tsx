import type { Metadata } from 'next'
import Link from 'next/link'
import { NewVersionForm } from '@/components/llm/preset-forms'
import { Card, PageHeader } from '@/components/ui/card'
import { formatDate, Table, Td } from '@/components/ui/table'
import { loadForPage } from '@/lib/server/page-data'
import { listConnections } from '@/lib/server/services/connections'
import { getPreset } from '@/lib/server/services/presets'

export const metadata: Metadata = { title: 'Preset' }

export default async function PresetPage({ params }: { params: Promise<{ presetId: string }> }) {
  const { presetId } = await params
  const preset = await loadForPage(getPreset, { presetId })
  const connections = await loadForPage(listConnections, {})
  const latest = preset.versions[0]
  return (
    <div className="max-w-4xl space-y-6">
      <PageHeader
        title={preset.name}
        description={preset.study ? `Study ${preset.study.name}` : 'Available to everyone'}
        actions={
          <Link href="/presets" className="text-sm text-brand-700 underline">
            ← All presets
          </Link>
        }
      />
      <Table
        caption="Versions"
        head={['Version', 'Model', 'Temperature', 'top_p', 'Max tokens', 'Seed', 'Output', 'Created']}
      >
        {preset.versions.map((v) => (
          <tr key={v.id}>
            <Td>v{v.version}</Td>
            <Td className="font-mono text-xs">
              {v.model} via {v.connection.name}
            </Td>
            <Td>{v.temperature ?? '—'}</Td>
            <Td>{v.topP ?? '—'}</Td>
            <Td>{v.maxTokens ?? '—'}</Td>
            <Td>{v.seed ?? '—'}</Td>
            <Td>{v.responseFormat}</Td>
            <Td className="text-stone-500">{formatDate(v.createdAt)}</Td>
          </tr>
        ))}
      </Table>
      {latest && (
        <Card title="Change it" description={`Starts from v${latest.version}. Saving creates v${latest.version + 1}.`}>
          <NewVersionForm
            presetId={preset.id}
            connections={connections.map((c) => ({ value: c.id, label: c.name }))}
            latest={latest}
          />
        </Card>
      )}
    </div>
  )
}
