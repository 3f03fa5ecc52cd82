import type { Metadata } from 'next'
import Link from 'next/link'
import {
  DeleteConnectionForm,
  EditConnectionForm,
  MoveConnectionForm,
  TestConnectionForm,
} from '@/components/llm/connection-forms'
import { Playground } from '@/components/llm/playground'
import { Alert, Badge, Card, PageHeader } from '@/components/ui/card'
import { requirePage } from '@/lib/server/auth/session'
import { hasScope } from '@/lib/server/auth/roles'
import { loadForPage } from '@/lib/server/page-data'
import { getConnection, ownerOptions, PROVIDER_LABELS } from '@/lib/server/services/connections'

export const metadata: Metadata = { title: 'Connection' }

export default async function ConnectionPage({ params }: { params: Promise<{ connectionId: string }> }) {
  const { connectionId } = await params
  const { actor } = await requirePage('connections:manage')
  const c = await loadForPage(getConnection, { connectionId })
  const editable = c.studyId !== null || hasScope(actor.role, 'connections:manage-global')
  const demo = c.provider === 'demo'
  const owners = editable && !demo ? await ownerOptions(actor) : []
  return (
    <div className="max-w-4xl space-y-6">
      <PageHeader
        title={
          <>
            {c.name} {demo && <Badge tone="amber">simulated</Badge>}
          </>
        }
        description={`${PROVIDER_LABELS[c.provider as keyof typeof PROVIDER_LABELS] ?? c.provider} · ${c.study ? `study ${c.study.name}` : 'available to everyone'}`}
        actions={
          <Link href="/connections" className="text-sm text-brand-700 underline">
            ← All models
          </Link>
        }
      />
      {demo && (
        <Alert tone="info">
          This is Parley&apos;s built-in simulated model: deterministic, rule-based answers so every page works offline.
          It is not a language model. Add a real one on the Models page.
        </Alert>
      )}
      <Card title="Test">
        {c.restrictedHosts && (
          <p className="mb-3 text-sm text-stone-600">
            Public addresses only: its address was set by someone who is not an admin, so it cannot reach internal hosts
            (unless an admin allowed them), and failures show only their kind and status.
          </p>
        )}
        <TestConnectionForm connectionId={c.id} />
      </Card>
      <Card
        title="Try a prompt"
        description="The reply streams in as the model writes it; the call is recorded in Calls."
      >
        <Playground connectionId={c.id} defaultModel={c.defaultModel} />
      </Card>
      {editable && (
        <Card title="Settings">
          <EditConnectionForm c={c} />
          {!demo && owners.length > 0 && (
            <div className="mt-4 border-t border-stone-100 pt-4">
              <p className="mb-2 text-sm text-stone-600">
                Available to {c.study ? `study ${c.study.name}` : 'everyone'}. Moving it changes who may use its key;
                runs and presets that used it keep their record.
              </p>
              <MoveConnectionForm connectionId={c.id} owners={owners} current={c.studyId ?? ''} />
            </div>
          )}
          {!demo && (
            <div className="mt-4 border-t border-stone-100 pt-4">
              <DeleteConnectionForm connectionId={c.id} />
            </div>
          )}
        </Card>
      )}
    </div>
  )
}
