'use client'

import Link from 'next/link'
import { useRouter } from 'next/navigation'
import { useEffect, useState } from 'react'

const KEY = 'parley:auto-advance'
const SECONDS = 3

/**
 * Shown where the turn form was once a session ends: Next session (the first session awaiting the
 * person), and optionally going on to it by itself after a short countdown (a choice kept in this
 * browser; "Stay here" stops it). With `claim`, the next session is one offered to claim (the next
 * item of the run), opened for the person to claim it.
 */
export function SessionOver({ next, claim = false }: { next: string | null; claim?: boolean }) {
  const router = useRouter()
  const [auto, setAuto] = useState(false)
  const [left, setLeft] = useState<number | null>(null)
  useEffect(() => {
    try {
      setAuto(localStorage.getItem(KEY) === 'on')
    } catch {}
  }, [])
  useEffect(() => {
    if (!auto || !next) {
      setLeft(null)
      return
    }
    setLeft(SECONDS)
    const tick = setInterval(() => setLeft((s) => (s === null ? s : Math.max(0, s - 1))), 1000)
    const go = setTimeout(() => router.push(`/sessions/${next}`), SECONDS * 1000)
    return () => {
      clearInterval(tick)
      clearTimeout(go)
    }
  }, [auto, next, router])
  const choose = (on: boolean) => {
    setAuto(on)
    try {
      localStorage.setItem(KEY, on ? 'on' : 'off')
    } catch {}
  }
  return (
    <div className="space-y-2 text-sm" data-testid="session-over">
      <div className="flex flex-wrap items-center gap-3">
        {next ? (
          <Link href={`/sessions/${next}`} className="rounded-md bg-brand-600 px-3 py-1.5 font-medium text-white">
            {claim ? 'Next: claim the next one →' : 'Next session →'}
          </Link>
        ) : (
          <span>Nothing else is waiting for you.</span>
        )}
        <Link href="/work" className="text-brand-700 underline">
          Back to My work
        </Link>
      </div>
      <label className="flex items-center gap-2 text-xs text-stone-600">
        <input type="checkbox" checked={auto} onChange={(e) => choose(e.target.checked)} /> Open the next session by
        itself when a session ends
      </label>
      {left !== null && (
        <p role="status" className="text-xs text-stone-600">
          Opening the next session in {left} s…{' '}
          <button type="button" className="text-brand-700 underline" onClick={() => choose(false)}>
            Stay here
          </button>
        </p>
      )}
    </div>
  )
}
