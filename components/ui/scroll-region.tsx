'use client'

import { type ReactNode, useEffect, useRef, useState } from 'react'

/**
 * A box that may scroll (a long JSON block, a wide table on a phone). While its content overflows it
 * is a labelled region in the tab order, so people on a keyboard can focus it and scroll it with the
 * arrow keys (WCAG 2.1.1); a box that fits adds no tab stop.
 */
export function ScrollRegion({
  label,
  className,
  children,
  as = 'div',
  testId,
}: {
  /** What the region holds, for screen readers ("Request JSON", "Messages of this session"). */
  label: string
  className?: string
  children: ReactNode
  as?: 'div' | 'pre'
  testId?: string
}) {
  const ref = useRef<HTMLElement | null>(null)
  const [scrolls, setScrolls] = useState(false)
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const check = () => setScrolls(el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
    check()
    const resized = new ResizeObserver(check)
    resized.observe(el)
    const changed = new MutationObserver(check)
    changed.observe(el, { childList: true, subtree: true, characterData: true })
    return () => {
      resized.disconnect()
      changed.disconnect()
    }
  }, [])
  const Tag = as
  return (
    <Tag
      ref={(node: HTMLElement | null) => {
        ref.current = node
      }}
      className={className}
      data-testid={testId}
      {...(scrolls ? { tabIndex: 0, role: 'region', 'aria-label': label } : {})}
    >
      {children}
    </Tag>
  )
}
