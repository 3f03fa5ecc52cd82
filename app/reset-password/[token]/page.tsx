import type { Metadata } from 'next'
import Link from 'next/link'
import { ResetPasswordForm } from '@/components/auth/reset-password-form'
import { resetLinkOwner } from '@/lib/server/services/users'

export const metadata: Metadata = { title: 'Choose a new password', referrer: 'no-referrer' }
export const dynamic = 'force-dynamic'

/** The page a one-time reset link opens (no session needed: the token is the credential). */
export default async function ResetPasswordPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params
  const owner = await resetLinkOwner(token)
  return (
    <main id="main" className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-6">
      <h1 className="text-2xl font-semibold tracking-tight text-brand-700">Parley</h1>
      {owner ? (
        <>
          <p className="mb-6 mt-1 text-sm text-stone-600">
            Choose a new password for <strong>{owner.email}</strong>. You will be signed out everywhere else.
          </p>
          <div className="rounded-lg border border-stone-200 bg-white p-5 shadow-sm">
            <ResetPasswordForm token={token} />
          </div>
        </>
      ) : (
        <p className="mt-4 rounded-md border border-amber-200 bg-amber-50 p-3 text-sm text-amber-900">
          This reset link is expired or was already used. Ask an admin for a new one, or{' '}
          <Link href="/sign-in" className="underline">
            sign in
          </Link>
          .
        </p>
      )}
    </main>
  )
}
