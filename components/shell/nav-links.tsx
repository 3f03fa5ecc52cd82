'use client'

import Link from 'next/link'
import { usePathname } from 'next/navigation'
import { cn } from '@/components/ui/cn'

export function NavLinks({ items }: { items: Array<{ href: string; label: string }> }) {
  const pathname = usePathname()
  return (
    <ul className="flex flex-col gap-0.5">
      {items.map((item) => {
        const active = pathname === item.href || pathname.startsWith(`${item.href}/`)
        return (
          <li key={item.href}>
            <Link
              href={item.href}
              aria-current={active ? 'page' : undefined}
              className={cn(
                'block rounded-md px-3 py-1.5 text-sm',
                active ? 'bg-brand-100 font-medium text-brand-800' : 'text-stone-700 hover:bg-stone-100',
              )}
            >
              {item.label}
            </Link>
          </li>
        )
      })}
    </ul>
  )
}
