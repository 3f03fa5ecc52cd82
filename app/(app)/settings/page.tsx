import type { Metadata } from 'next'
import { CreateApiKeyForm, PasswordForm, ProfileForm, RevokeApiKeyForm } from '@/components/settings/account-forms'
import { Badge, Card, PageHeader } from '@/components/ui/card'
import { formatDate, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { ROLE_LABELS, ROLE_SCOPES } from '@/lib/server/auth/roles'
import { loadForPage } from '@/lib/server/page-data'
import { listMyApiKeys } from '@/lib/server/services/api-keys'

export const metadata: Metadata = { title: 'Settings' }

export default async function SettingsPage() {
  const { actor } = await requirePage('profile:update')
  const keys = await loadForPage(listMyApiKeys, {})
  return (
    <div className="max-w-3xl space-y-6">
      <PageHeader title="Settings" description={`Signed in as ${actor.email} (${ROLE_LABELS[actor.role]}).`} />
      <Card title="Profile">
        <ProfileForm name={actor.name} />
      </Card>
      <Card title="Password">
        <PasswordForm />
      </Card>
      <Card
        title="API keys"
        description={
          <>
            For the REST API at <code>/api/v1</code> (
            <a className="underline" href="/api/v1/openapi.json">
              OpenAPI document
            </a>
            ). A key acts with your role: {ROLE_SCOPES[actor.role].join(', ')}.
          </>
        }
      >
        <CreateApiKeyForm />
        {keys.length > 0 && (
          <div className="mt-4">
            <Table caption="Your API keys" head={['Name', 'Key', 'Created', 'Last used', 'Status', '']}>
              {keys.map((k) => {
                const expired = k.expiresAt && k.expiresAt < new Date()
                return (
                  <tr key={k.id}>
                    <Td>{k.name}</Td>
                    <Td className="font-mono text-xs">pk_{k.prefix}_…</Td>
                    <Td className="text-stone-500">{formatDate(k.createdAt)}</Td>
                    <Td className="text-stone-500">{formatDate(k.lastUsedAt)}</Td>
                    <Td>
                      {k.revokedAt ? (
                        <Badge tone="red">revoked</Badge>
                      ) : expired ? (
                        <Badge tone="amber">expired</Badge>
                      ) : (
                        <Badge tone="green">active</Badge>
                      )}
                    </Td>
                    <Td>{!k.revokedAt && <RevokeApiKeyForm keyId={k.id} name={k.name} />}</Td>
                  </tr>
                )
              })}
            </Table>
          </div>
        )}
      </Card>
    </div>
  )
}
