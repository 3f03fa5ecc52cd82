import Link from 'next/link'

export default function NotFound() {
  return (
    <main id="main" className="mx-auto max-w-lg px-6 py-24 text-center">
      <p className="text-sm font-semibold text-brand-700">404</p>
      <h1 className="mt-2 text-2xl font-semibold">Not found</h1>
      <p className="mt-2 text-stone-600">
        This page does not exist, or it is not shared with you. If someone sent you this link, ask them to add you to
        the study.
      </p>
      <Link href="/" className="mt-6 inline-block text-brand-700 underline">
        Go to your home page
      </Link>
    </main>
  )
}
