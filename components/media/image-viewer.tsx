'use client'

import { type PointerEvent, useEffect, useRef, useState } from 'react'

const MIN = 1
const MAX = 8
const LEVEL = { min: 20, max: 300, step: 10 }

/** One of the viewer's levels (brightness, contrast) as a range in percent. */
function LevelSlider(props: { label: string; testId: string; value: number; onChange: (v: number) => void }) {
  return (
    <label className="flex items-center gap-1">
      {props.label}
      <input
        type="range"
        min={LEVEL.min}
        max={LEVEL.max}
        step={LEVEL.step}
        value={props.value}
        onChange={(e) => props.onChange(Number(e.target.value))}
      />
      <span data-testid={props.testId}>{props.value}%</span>
    </label>
  )
}

/**
 * An image (an X-ray …) a radiologist can read: zoom and pan (buttons, the wheel without scrolling
 * the page, dragging, arrow keys), window/level as brightness and contrast, invert, full screen and
 * reset. The viewer takes focus (click it or Tab to it) and is driven by keys while it has it:
 * + / − zoom, 0 resets everything, arrows pan, i inverts, f toggles full screen, [ / ] brightness,
 * { / } contrast. Pure CSS transforms and filters on the image; nothing is re-encoded.
 */
export function ImageViewer({ src, alt, label = 'Image viewer' }: { src: string; alt: string; label?: string }) {
  const [scale, setScale] = useState(1)
  const [pos, setPos] = useState({ x: 0, y: 0 })
  const [brightness, setBrightness] = useState(100)
  const [contrast, setContrast] = useState(100)
  const [invert, setInvert] = useState(false)
  const [full, setFull] = useState(false)
  const box = useRef<HTMLDivElement>(null)
  const outer = useRef<HTMLDivElement>(null)
  const drag = useRef<{ x: number; y: number; px: number; py: number } | null>(null)
  const zoom = (f: number) =>
    setScale((s) => {
      const next = Math.min(MAX, Math.max(MIN, s * f))
      if (next === 1) setPos({ x: 0, y: 0 })
      return next
    })
  const level = (set: (f: (v: number) => number) => void, d: number) =>
    set((v) => Math.min(LEVEL.max, Math.max(LEVEL.min, v + d)))
  const reset = () => {
    setScale(1)
    setPos({ x: 0, y: 0 })
    setBrightness(100)
    setContrast(100)
    setInvert(false)
  }
  const toggleFull = () => {
    const el = outer.current
    if (!el) return
    if (document.fullscreenElement) void document.exitFullscreen()
    else void el.requestFullscreen?.().then(() => box.current?.focus())
  }
  useEffect(() => {
    const onChange = () => setFull(document.fullscreenElement === outer.current)
    document.addEventListener('fullscreenchange', onChange)
    return () => document.removeEventListener('fullscreenchange', onChange)
  }, [])
  // React's wheel listener is passive, so it cannot stop the page from scrolling: a native one can.
  useEffect(() => {
    const el = box.current
    if (!el) return
    const onWheel = (e: WheelEvent) => {
      e.preventDefault()
      zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2)
    }
    el.addEventListener('wheel', onWheel, { passive: false })
    return () => el.removeEventListener('wheel', onWheel)
  }, [])
  const onDown = (e: PointerEvent<HTMLDivElement>) => {
    box.current?.focus()
    if (scale === 1) return
    e.currentTarget.setPointerCapture(e.pointerId)
    drag.current = { x: e.clientX, y: e.clientY, px: pos.x, py: pos.y }
  }
  const onMove = (e: PointerEvent<HTMLDivElement>) => {
    const d = drag.current
    if (d) setPos({ x: d.px + (e.clientX - d.x), y: d.py + (e.clientY - d.y) })
  }
  const pan = (dx: number, dy: number) => {
    if (scale > 1) setPos((p) => ({ x: p.x + dx, y: p.y + dy }))
  }
  const btn = 'rounded border border-stone-300 bg-white px-2 py-0.5 text-sm hover:bg-stone-100'
  const filter = `brightness(${brightness}%) contrast(${contrast}%)${invert ? ' invert(1)' : ''}`
  return (
    <div ref={outer} className={full ? 'flex h-full flex-col bg-black p-3 text-white' : ''}>
      <div className="mb-2 flex flex-wrap items-center gap-2 text-stone-900">
        <button type="button" className={btn} onClick={() => zoom(1.5)} aria-label="Zoom in">
          +
        </button>
        <button type="button" className={btn} onClick={() => zoom(1 / 1.5)} aria-label="Zoom out">
          −
        </button>
        <button type="button" className={btn} onClick={() => setInvert((v) => !v)} aria-pressed={invert}>
          Invert
        </button>
        <button type="button" className={btn} onClick={reset}>
          Reset
        </button>
        <button type="button" className={btn} onClick={toggleFull} aria-pressed={full}>
          {full ? 'Exit full screen' : 'Full screen'}
        </button>
        <span className={`text-xs ${full ? 'text-stone-300' : 'text-stone-500'}`} data-testid="zoom-level">
          {Math.round(scale * 100)}%
        </span>
      </div>
      <div className={`mb-2 flex flex-wrap gap-4 text-xs ${full ? 'text-stone-200' : 'text-stone-600'}`}>
        <LevelSlider label="Brightness" testId="brightness" value={brightness} onChange={setBrightness} />
        <LevelSlider label="Contrast" testId="contrast" value={contrast} onChange={setContrast} />
      </div>
      {/* An application region: the viewer is driven by its own keys, so it takes focus. */}
      <div
        ref={box}
        role="application"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: an application region driven by its own keys takes focus
        tabIndex={0}
        aria-roledescription="image viewer"
        aria-label={`${label}: + and − zoom, arrows pan, [ ] brightness, { } contrast, i inverts, f full screen, 0 resets`}
        data-testid="image-viewer"
        data-inverted={invert}
        className={`relative touch-none overflow-hidden overscroll-contain rounded bg-black focus:outline focus:outline-2 focus:outline-offset-2 focus:outline-brand-600 ${full ? 'flex-1' : 'h-[36rem] max-h-[75vh]'}`}
        style={{ cursor: scale > 1 ? (drag.current ? 'grabbing' : 'grab') : 'default' }}
        onPointerDown={onDown}
        onPointerMove={onMove}
        onPointerUp={() => {
          drag.current = null
        }}
        onKeyDown={(e) => {
          if (e.ctrlKey || e.metaKey || e.altKey) return
          const keys: Record<string, () => void> = {
            '+': () => zoom(1.5),
            '=': () => zoom(1.5),
            '-': () => zoom(1 / 1.5),
            '0': reset,
            i: () => setInvert((v) => !v),
            f: toggleFull,
            '[': () => level(setBrightness, -LEVEL.step),
            ']': () => level(setBrightness, LEVEL.step),
            '{': () => level(setContrast, -LEVEL.step),
            '}': () => level(setContrast, LEVEL.step),
            ArrowLeft: () => pan(40, 0),
            ArrowRight: () => pan(-40, 0),
            ArrowUp: () => pan(0, 40),
            ArrowDown: () => pan(0, -40),
          }
          const act = keys[e.key]
          if (!act) return
          act()
          e.preventDefault()
          e.stopPropagation()
          // Page-wide shortcuts (a form's single keys) listen on the document too: they must not act.
          e.nativeEvent.stopImmediatePropagation()
        }}
      >
        <img
          src={src}
          alt={alt}
          draggable={false}
          className="h-full w-full select-none object-contain"
          style={{
            transform: `translate(${pos.x}px, ${pos.y}px) scale(${scale})`,
            transformOrigin: 'center',
            filter,
          }}
        />
      </div>
    </div>
  )
}
