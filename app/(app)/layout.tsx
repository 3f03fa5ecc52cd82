import type { ReactNode } from 'react'
import { AppShell } from '@/components/shell/app-shell'
import { requirePage } from '@/lib/server/auth/session'

export const dynamic = 'force-dynamic'

export default async function AppLayout({ children }: { children: ReactNode }) {
  const { actor } = await requirePage()
  return <AppShell actor={actor}>{children}</AppShell>
}
