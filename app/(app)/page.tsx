import { redirect } from 'next/navigation'
import { requirePage } from '@/lib/server/auth/session'
import { hasScope } from '@/lib/server/auth/roles'

/** Home: researchers, admins and viewers start at their studies; experts and annotators at their work. */
export default async function Home() {
  const { actor } = await requirePage()
  redirect(hasScope(actor.role, 'studies:read') ? '/studies' : '/work')
}
