'use client'

import { useCallback, useEffect, useRef, useState } from 'react'
import { Markdown } from '@/components/ui/markdown'

/**
 * The study's guidelines in a centred dialog, one click (or the `g` key) away, as sanitised Markdown.
 * The Markdown is parsed in the browser the first time the dialog opens, not on the server for
 * every page view (most views never open it).
 */
export function GuidelinesButton({ guidelines }: { guidelines: string | null }) {
  const ref = useRef<HTMLDialogElement>(null)
  const opener = useRef<HTMLButtonElement>(null)
  const [opened, setOpened] = useState(false)
  const show = useCallback(() => {
    setOpened(true)
    ref.current?.showModal()
  }, [])
  useEffect(() => {
    window.addEventListener('parley:guidelines', show)
    return () => window.removeEventListener('parley:guidelines', show)
  }, [show])
  return (
    <>
      <button
        ref={opener}
        type="button"
        onClick={show}
        className="rounded-md border border-stone-300 bg-white px-3 py-1.5 text-sm hover:bg-stone-100"
      >
        Guidelines (g)
      </button>
      <dialog
        ref={ref}
        aria-labelledby="guidelines-title"
        onClose={() => opener.current?.focus()}
        className="m-auto max-h-[85vh] w-[min(42rem,calc(100vw-2rem))] rounded-lg p-0 shadow-xl backdrop:bg-black/30"
      >
        <div className="p-6">
          <h2 id="guidelines-title" className="mb-3 text-lg font-semibold">
            Study guidelines
          </h2>
          {!opened ? null : guidelines ? (
            <Markdown>{guidelines}</Markdown>
          ) : (
            <p className="text-sm">No guidelines yet.</p>
          )}
          <div className="mt-5 text-right">
            <button
              type="button"
              onClick={() => ref.current?.close()}
              className="rounded-md border border-stone-300 px-3 py-1 text-sm"
            >
              Close
            </button>
          </div>
        </div>
      </dialog>
    </>
  )
}
