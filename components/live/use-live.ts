'use client'

import { useRouter } from 'next/navigation'
import { useEffect, useRef, useState } from 'react'

export type LiveEvent =
  | { type: 'message'; seq: number }
  | { type: 'status'; status: string }
  | { type: 'delta'; seq: number; text: string; seat?: string }
  | { type: 'progress' }
  | { type: 'resync' }
  | { type: 'down' }

/**
 * Watch a topic over server-sent events (/api/live); on every change re-read the page's server
 * data (throttled). Falls back to polling every `fallbackMs` while the stream is down, or while the
 * server says its own database listener is down (`down` … `resync`; a `resync` re-reads at once).
 */
export function useLive(topic: string, opts: { onEvent?: (e: LiveEvent) => void; fallbackMs?: number } = {}) {
  const router = useRouter()
  const [connected, setConnected] = useState(false)
  const onEvent = useRef(opts.onEvent)
  onEvent.current = opts.onEvent
  const fallbackMs = opts.fallbackMs ?? 5000
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const refresh = () => {
      if (timer) return
      timer = setTimeout(() => {
        timer = undefined
        router.refresh()
      }, 250)
    }
    let serverListening = true
    const es = new EventSource(`/api/live?topic=${encodeURIComponent(topic)}`)
    es.addEventListener('ready', () => {
      serverListening = true
      setConnected(true)
    })
    es.addEventListener('update', (m) => {
      const e = JSON.parse((m as MessageEvent).data) as LiveEvent
      if (e.type === 'down') {
        serverListening = false
        setConnected(false)
        return
      }
      if (e.type === 'resync') {
        serverListening = true
        setConnected(true)
      }
      onEvent.current?.(e)
      if (e.type !== 'delta') refresh()
    })
    es.onerror = () => setConnected(false)
    const poll = setInterval(() => {
      if (es.readyState !== EventSource.OPEN || !serverListening) router.refresh()
    }, fallbackMs)
    return () => {
      es.close()
      clearInterval(poll)
      if (timer) clearTimeout(timer)
    }
  }, [topic, router, fallbackMs])
  return { connected }
}
