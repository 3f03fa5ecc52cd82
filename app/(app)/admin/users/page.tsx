import type { Metadata } from 'next'
import { CreateUserForm, DisableForm, RoleForm, UserRow } from '@/components/admin/user-forms'
import { Badge, Card, PageHeader } from '@/components/ui/card'
import { formatDate, Pagination, Table, Td } from '@/components/ui/table'
import { requirePage } from '@/lib/server/auth/session'
import { ROLE_DESCRIPTIONS, ROLE_LABELS, ROLES } from '@/lib/server/auth/roles'
import { flatParams, loadForPage } from '@/lib/server/page-data'
import { listUsers } from '@/lib/server/services/users'

export const metadata: Metadata = { title: 'Users' }

export default async function UsersPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { actor } = await requirePage('users:manage')
  const params = await flatParams(searchParams)
  const data = await loadForPage(listUsers, { page: params.page, q: params.q })
  const roles = ROLES.map((r) => ({ value: r, label: ROLE_LABELS[r] }))
  return (
    <>
      <PageHeader
        title="Users"
        description="Create accounts, change roles, reset passwords and disable access. Every change is in the audit log."
      />
      <div className="space-y-6">
        <Card title="Create a user">
          <CreateUserForm roles={roles} />
        </Card>
        <form role="search" className="flex gap-2">
          <label className="sr-only" htmlFor="user-q">
            Search users
          </label>
          <input
            id="user-q"
            name="q"
            defaultValue={params.q}
            placeholder="Search name or email"
            className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm"
          />
          <button type="submit" className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm">
            Search
          </button>
        </form>
        <Table caption="Users" head={['Name', 'Email', 'Role', 'Status', 'Created', '']}>
          {data.items.map((u) => (
            <UserRow
              key={u.id}
              userId={u.id}
              email={u.email}
              columns={6}
              cells={
                <>
                  <Td>{u.name}</Td>
                  <Td>{u.email}</Td>
                  <Td>
                    <RoleForm userId={u.id} role={u.role} roles={roles} email={u.email} />
                  </Td>
                  <Td>{u.disabled ? <Badge tone="red">disabled</Badge> : <Badge tone="green">active</Badge>}</Td>
                  <Td className="whitespace-nowrap text-stone-500">{formatDate(u.createdAt)}</Td>
                </>
              }
              actions={u.id !== actor.userId ? <DisableForm userId={u.id} disabled={u.disabled} /> : null}
            />
          ))}
        </Table>
        <Pagination {...data} params={params} basePath="/admin/users" />
        <Card title="What each role can do">
          <dl className="grid grid-cols-[8rem_1fr] gap-y-1 text-sm">
            {ROLES.map((r) => (
              <div key={r} className="contents">
                <dt className="font-medium">{ROLE_LABELS[r]}</dt>
                <dd className="text-stone-600">{ROLE_DESCRIPTIONS[r]}</dd>
              </div>
            ))}
          </dl>
        </Card>
      </div>
    </>
  )
}
