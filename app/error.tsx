'use client'

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main id="main" className="mx-auto max-w-lg px-6 py-24 text-center">
      <p className="text-sm font-semibold text-red-700">500</p>
      <h1 className="mt-2 text-2xl font-semibold">Something went wrong</h1>
      <p className="mt-2 text-stone-600">
        Parley hit an error showing this page. Nothing you saved is lost. Try again; if it keeps happening, give an
        admin this reference: <code>{error.digest ?? 'n/a'}</code>
      </p>
      <button type="button" onClick={reset} className="mt-6 rounded-md bg-brand-600 px-3 py-1.5 text-sm text-white">
        Try again
      </button>
    </main>
  )
}
