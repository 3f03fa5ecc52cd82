import Link from 'next/link'

export default function Forbidden() {
  return (
    <main id="main" className="mx-auto max-w-lg px-6 py-24 text-center">
      <p className="text-sm font-semibold text-red-700">403</p>
      <h1 className="mt-2 text-2xl font-semibold">Not allowed</h1>
      <p className="mt-2 text-stone-600">Your role does not include this page. An admin can change your role.</p>
      <Link href="/" className="mt-6 inline-block text-brand-700 underline">
        Go to your home page
      </Link>
    </main>
  )
}
