import type { Metadata } from 'next'
import { redirect } from 'next/navigation'
import { SignInForm } from '@/components/auth/sign-in-form'
import { safeNext } from '@/lib/safe-next'
import { getCurrentSession } from '@/lib/server/auth/session'
import { needsSetup } from '@/lib/server/bootstrap'

export const metadata: Metadata = { title: 'Sign in' }
export const dynamic = 'force-dynamic'

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  // A repeated ?next= arrives as an array; only one plain path is ever followed.
  const given = (await searchParams).next
  const next = typeof given === 'string' ? given : undefined
  if (await needsSetup()) redirect('/setup')
  if (await getCurrentSession()) redirect(safeNext(next))
  const demo = process.env.PARLEY_DEMO === '1'
  return (
    <main id="main" className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-6">
      <h1 className="text-2xl font-semibold tracking-tight text-brand-700">Parley</h1>
      <p className="mb-6 mt-1 text-sm text-stone-600">Sign in to your studies and assigned work.</p>
      <div className="rounded-lg border border-stone-200 bg-white p-5 shadow-sm">
        <SignInForm next={next} />
      </div>
      {demo && (
        <p className="mt-4 rounded-md border border-amber-200 bg-amber-50 p-3 text-xs text-amber-900">
          Demo install: sign in as <code>admin@parley.local</code> (or researcher@, expert@, annotator@, viewer@) with
          the password <code>parley-demo</code>. Change these before sharing this instance.
        </p>
      )}
    </main>
  )
}
