'use client'

import { usePathname } from 'next/navigation'
import { type ReactNode, useEffect, useId, useRef, useState } from 'react'
import { cn } from '@/components/ui/cn'

/**
 * The sidebar: a column beside the page from the `md` breakpoint (768 px) up; on a phone a bar with
 * the brand and a Menu button that opens the navigation above the page (Escape or a link closes it),
 * so the page gets the whole width of the screen.
 */
export function Sidebar({ brand, children }: { brand: ReactNode; children: ReactNode }) {
  const [open, setOpen] = useState(false)
  const pathname = usePathname()
  const panel = useId()
  const button = useRef<HTMLButtonElement>(null)
  // A link followed from the open menu lands on the new page with the menu closed.
  useEffect(() => setOpen(false), [pathname])
  useEffect(() => {
    if (!open) return
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return
      setOpen(false)
      button.current?.focus()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [open])
  return (
    <aside className="shrink-0 border-b border-stone-200 bg-white md:flex md:min-h-screen md:w-56 md:flex-col md:border-r md:border-b-0">
      <div className="flex items-center justify-between px-4 py-3 md:py-4">
        {brand}
        <button
          ref={button}
          type="button"
          aria-expanded={open}
          aria-controls={panel}
          onClick={() => setOpen((o) => !o)}
          className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm font-medium text-stone-800 hover:bg-stone-100 md:hidden"
        >
          {open ? 'Close menu' : 'Menu'}
        </button>
      </div>
      <div id={panel} className={cn(open ? 'flex' : 'hidden', 'flex-1 flex-col md:flex')}>
        {children}
      </div>
    </aside>
  )
}
