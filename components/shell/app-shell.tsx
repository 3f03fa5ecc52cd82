import Link from 'next/link'
import type { ReactNode } from 'react'
import { signOutAction } from '@/app/actions/account'
import type { Actor } from '@/lib/server/actor'
import { hasScope, ROLE_LABELS, type Scope } from '@/lib/server/auth/roles'
import { NavLinks } from './nav-links'
import { Sidebar } from './sidebar'

const NAV: Array<{ href: string; label: string; scope: Scope }> = [
  { href: '/work', label: 'My work', scope: 'work:read-own' },
  { href: '/studies', label: 'Studies', scope: 'studies:read' },
  { href: '/runs', label: 'Runs', scope: 'studies:read' },
  { href: '/connections', label: 'Models', scope: 'connections:manage' },
  { href: '/presets', label: 'Model presets', scope: 'connections:manage' },
  { href: '/calls', label: 'Calls', scope: 'calls:read' },
  { href: '/admin/users', label: 'Users', scope: 'users:manage' },
  { href: '/admin/prices', label: 'Prices', scope: 'prices:manage' },
  { href: '/admin/audit', label: 'Audit log', scope: 'audit:read' },
  { href: '/settings', label: 'Settings', scope: 'profile:update' },
]

export function navFor(role: Actor['role']) {
  return NAV.filter((n) => hasScope(role, n.scope)).map(({ href, label }) => ({ href, label }))
}

export function AppShell({ actor, children }: { actor: Actor; children: ReactNode }) {
  return (
    <div className="min-h-screen md:flex">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2"
      >
        Skip to content
      </a>
      <Sidebar
        brand={
          <Link href="/" className="text-lg font-semibold tracking-tight text-brand-700">
            Parley
          </Link>
        }
      >
        <nav aria-label="Main" className="flex-1 px-2">
          <NavLinks items={navFor(actor.role)} />
        </nav>
        <div className="border-t border-stone-200 px-4 py-3 text-sm">
          <p className="truncate font-medium text-stone-800" title={actor.email}>
            {actor.name}
          </p>
          <p className="truncate text-xs text-stone-600">
            {actor.email} · <span data-testid="current-role">{ROLE_LABELS[actor.role]}</span>
          </p>
          <form action={signOutAction} className="mt-2">
            <button type="submit" className="text-xs text-stone-600 underline hover:text-stone-900">
              Sign out
            </button>
          </form>
        </div>
      </Sidebar>
      <main id="main" className="min-w-0 flex-1 px-4 py-4 md:px-8 md:py-6">
        {children}
      </main>
    </div>
  )
}
