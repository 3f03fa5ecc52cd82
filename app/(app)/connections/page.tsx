import type { Metadata } from 'next'
import Link from 'next/link'
import { CreateConnectionForm } from '@/components/llm/connection-forms'
import { Alert, Badge, Card, PageHeader } from '@/components/ui/card'
import { Table, Td } from '@/components/ui/table'
import { hasScope } from '@/lib/server/auth/roles'
import { requirePage } from '@/lib/server/auth/session'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { defaultOwner, listConnections, ownerOptions, PROVIDER_LABELS } from '@/lib/server/services/connections'

export const metadata: Metadata = { title: 'Models' }

export default async function ConnectionsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('connections:manage')
  const sp = await flatParams(searchParams)
  const connections = await loadForPage(listConnections, {})
  const owners = await ownerOptions(actor)
  const startOwner = await defaultOwner(actor, owners, sp.studyId)
  const real = connections.filter((c) => c.provider !== 'demo')
  return (
    <>
      <PageHeader
        title="Models"
        description="Connections to OpenAI-compatible endpoints. Keys are encrypted at rest and never reach the browser."
        actions={
          <Link className="text-sm text-brand-700 underline" href="/presets">
            Model presets →
          </Link>
        }
      />
      {real.length === 0 && (
        <div className="mb-4">
          <Alert tone="info">
            No real model is configured yet, so Parley uses the <strong>simulated demo model</strong>: deterministic,
            rule-based answers for trying every page offline, marked “simulated” wherever they appear. Add a real model
            below (OpenAI, Azure OpenAI, or any OpenAI-compatible server such as vLLM, Ollama or LM Studio).
          </Alert>
        </div>
      )}
      <div className="space-y-6">
        <Table caption="Connections" head={['Name', 'Provider', 'Base URL', 'Key', 'Default model', 'Available to']}>
          {connections.map((c) => (
            <tr key={c.id}>
              <Td>
                <Link href={`/connections/${c.id}`} className="font-medium text-brand-700 underline">
                  {c.name}
                </Link>
              </Td>
              <Td>
                {c.provider === 'demo' ? (
                  <Badge tone="amber">simulated</Badge>
                ) : (
                  PROVIDER_LABELS[c.provider as keyof typeof PROVIDER_LABELS]?.split(' (')[0]
                )}
              </Td>
              <Td className="font-mono text-xs">{c.provider === 'demo' ? 'built in' : c.baseUrl}</Td>
              <Td className="font-mono text-xs">{c.provider === 'demo' ? '—' : c.apiKeyMasked}</Td>
              <Td className="font-mono text-xs">{c.defaultModel}</Td>
              <Td>{c.study ? c.study.name : 'everyone'}</Td>
            </tr>
          ))}
        </Table>
        <Card title="Add a connection">
          {owners.length ? (
            <CreateConnectionForm
              providers={Object.entries(PROVIDER_LABELS)
                .filter(([v]) => v !== 'demo')
                .map(([value, label]) => ({ value, label }))}
              owners={owners}
              defaultOwner={startOwner}
              internalHosts={hasScope(actor.role, 'connections:internal-hosts')}
            />
          ) : (
            <p className="text-sm text-stone-600">
              Join a study first: connections you add belong to one of your studies.
            </p>
          )}
        </Card>
      </div>
    </>
  )
}
