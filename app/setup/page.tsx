import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { SetupForm } from '@/components/auth/setup-form'
import { needsSetup } from '@/lib/server/bootstrap'

export const metadata: Metadata = { title: 'Set up Parley' }
export const dynamic = 'force-dynamic'

/** One-time page: exists only while the database has no admin. */
export default async function SetupPage() {
  if (!(await needsSetup())) notFound()
  return (
    <main id="main" className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-6">
      <h1 className="text-2xl font-semibold tracking-tight text-brand-700">Welcome to Parley</h1>
      <p className="mb-6 mt-1 text-sm text-stone-600">
        Create the first admin account. This page disappears once an admin exists.
      </p>
      <div className="rounded-lg border border-stone-200 bg-white p-5 shadow-sm">
        <SetupForm />
      </div>
    </main>
  )
}
