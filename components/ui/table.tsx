import Link from 'next/link'
import type { ReactNode } from 'react'
import { ScrollRegion } from './scroll-region'

/** A column heading, with classes for its `<th>` (e.g. `hidden md:table-cell` for a column phones skip). */
export type Head = ReactNode | { label: ReactNode; className: string }

function isSpec(h: Head): h is { label: ReactNode; className: string } {
  return typeof h === 'object' && h !== null && 'label' in h && 'className' in h
}

export function Table({ caption, head, children }: { caption: string; head: Head[]; children: ReactNode }) {
  return (
    <ScrollRegion label={caption} className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
      <table className="w-full text-left text-sm">
        <caption className="sr-only">{caption}</caption>
        <thead className="border-b border-stone-200 bg-stone-50 text-xs uppercase tracking-wide text-stone-500">
          <tr>
            {head.map((h, i) => {
              const label = isSpec(h) ? h.label : h
              return (
                <th
                  key={typeof label === 'string' ? label : i}
                  scope="col"
                  className={`px-4 py-2 font-medium ${isSpec(h) ? h.className : ''}`}
                >
                  {label}
                </th>
              )
            })}
          </tr>
        </thead>
        <tbody className="divide-y divide-stone-100">{children}</tbody>
      </table>
    </ScrollRegion>
  )
}

export function Td({ children, className }: { children?: ReactNode; className?: string }) {
  return <td className={`px-4 py-2 align-top ${className ?? ''}`}>{children}</td>
}

/** Server-side pagination links that keep the other query parameters. */
export function Pagination({
  page,
  pageCount,
  total,
  params,
  basePath,
  pageParam = 'page',
}: {
  page: number
  pageCount: number
  total: number
  params: Record<string, string | undefined>
  basePath: string
  /** The query parameter of the page number (two lists on one page need two). */
  pageParam?: string
}) {
  if (total === 0) return null
  const href = (p: number) => {
    const q = new URLSearchParams()
    for (const [k, v] of Object.entries(params)) if (v && k !== pageParam) q.set(k, v)
    q.set(pageParam, String(p))
    return `${basePath}?${q}`
  }
  return (
    <nav aria-label="Pagination" className="mt-3 flex items-center justify-between text-sm text-stone-600">
      <span>
        Page {page} of {pageCount} · {total} in all
      </span>
      <span className="flex gap-2">
        {page > 1 ? (
          <Link
            className="rounded border border-stone-300 bg-white px-2 py-1 hover:bg-stone-100"
            href={href(page - 1)}
            rel="prev"
          >
            Previous
          </Link>
        ) : null}
        {page < pageCount ? (
          <Link
            className="rounded border border-stone-300 bg-white px-2 py-1 hover:bg-stone-100"
            href={href(page + 1)}
            rel="next"
          >
            Next
          </Link>
        ) : null}
      </span>
    </nav>
  )
}

export function formatDate(d: Date | string | null | undefined): string {
  if (!d) return '—'
  return `${new Date(d).toISOString().replace('T', ' ').slice(0, 16)} UTC`
}
