'use client'

import { type PointerEvent, useRef, useState } from 'react'

const MIN = 1
const MAX = 8

/**
 * An image (an X-ray …) with zoom and pan: buttons, the mouse wheel, dragging, and + / − / 0 while the viewer
 * has focus. Pure CSS transforms on the image; nothing is re-encoded.
 */
export function ImageViewer({ src, alt, label = 'Image viewer' }: { src: string; alt: string; label?: string }) {
  const [scale, setScale] = useState(1)
  const [pos, setPos] = useState({ x: 0, y: 0 })
  const drag = useRef<{ x: number; y: number; px: number; py: number } | null>(null)
  const zoom = (f: number) =>
    setScale((s) => {
      const next = Math.min(MAX, Math.max(MIN, s * f))
      if (next === 1) setPos({ x: 0, y: 0 })
      return next
    })
  const reset = () => {
    setScale(1)
    setPos({ x: 0, y: 0 })
  }
  const onDown = (e: PointerEvent<HTMLDivElement>) => {
    if (scale === 1) return
    e.currentTarget.setPointerCapture(e.pointerId)
    drag.current = { x: e.clientX, y: e.clientY, px: pos.x, py: pos.y }
  }
  const onMove = (e: PointerEvent<HTMLDivElement>) => {
    const d = drag.current
    if (d) setPos({ x: d.px + (e.clientX - d.x), y: d.py + (e.clientY - d.y) })
  }
  const btn = 'rounded border border-stone-300 bg-white px-2 py-0.5 text-sm hover:bg-stone-100'
  return (
    <div>
      <div className="mb-2 flex items-center gap-2">
        <button type="button" className={btn} onClick={() => zoom(1.5)} aria-label="Zoom in">
          +
        </button>
        <button type="button" className={btn} onClick={() => zoom(1 / 1.5)} aria-label="Zoom out">
          −
        </button>
        <button type="button" className={btn} onClick={reset}>
          Reset
        </button>
        <span className="text-xs text-stone-500" data-testid="zoom-level">
          {Math.round(scale * 100)}%
        </span>
      </div>
      <div
        role="group"
        aria-label={`${label}: + and − zoom, 0 resets, drag to pan`}
        className="relative h-96 touch-none overflow-hidden rounded bg-black focus:outline focus:outline-2 focus:outline-brand-600"
        style={{ cursor: scale > 1 ? (drag.current ? 'grabbing' : 'grab') : 'default' }}
        onWheel={(e) => zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2)}
        onPointerDown={onDown}
        onPointerMove={onMove}
        onPointerUp={() => {
          drag.current = null
        }}
        onKeyDown={(e) => {
          if (e.key === '+' || e.key === '=') zoom(1.5)
          else if (e.key === '-') zoom(1 / 1.5)
          else if (e.key === '0') reset()
          else return
          e.preventDefault()
          e.stopPropagation()
        }}
      >
        <img
          src={src}
          alt={alt}
          draggable={false}
          className="h-full w-full select-none object-contain"
          style={{ transform: `translate(${pos.x}px, ${pos.y}px) scale(${scale})`, transformOrigin: 'center' }}
        />
      </div>
    </div>
  )
}
