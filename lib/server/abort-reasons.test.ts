import { AsyncLocalStorage } from 'node:async_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { formatAbortReasons } from './abort-reasons'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * The retention React's completed renders caused (lib/server/abort-reasons.ts), in miniature: a
 * controller that lives on (as a render's request does when a pooled connection opened during it
 * keeps its async context), aborted with an Error inside an Immediate, and work queued after that
 * Immediate in another async context (a later render). Returns whether that later context is still
 * reachable after a full collection.
 */
async function laterContextKept(): Promise<boolean> {
  const als = new AsyncLocalStorage<{ payload: Uint8Array }>()
  const longLived = new AbortController()
  let later: WeakRef<object> | undefined
  setImmediate(function completed() {
    longLived.abort(new Error('This render completed successfully.'))
  })
  als.run({ payload: new Uint8Array(1 << 20) }, () => {
    later = new WeakRef(als.getStore() as object)
    setImmediate(() => {})
  })
  await nextTurn()
  await nextTurn()
  gc()
  await nextTurn()
  gc()
  // Used after the collection, so it is alive throughout, as the long-lived handle is.
  expect(longLived.signal.aborted).toBe(true)
  return later?.deref() !== undefined
}

// In order: the first case runs before the patch is installed (the patch is process-wide).
describe('abort reasons keep no frames (the render leak under load)', () => {
  it('without the patch, an abort reason made in an Immediate keeps the work queued after it (Node and V8 as they are)', async () => {
    // If this starts failing, Node or V8 no longer keep these frames, and the patch can go.
    expect(await laterContextKept()).toBe(true)
  })

  it('with it, that later work is collected', async () => {
    formatAbortReasons()
    expect(await laterContextKept()).toBe(false)
  })

  it('changes nothing else about abort: the reason, the event, non-Error reasons; installing twice wraps once', () => {
    formatAbortReasons()
    const wrapped = AbortController.prototype.abort
    formatAbortReasons()
    expect(AbortController.prototype.abort).toBe(wrapped)

    const c = new AbortController()
    const reason = new Error('stop')
    const seen: unknown[] = []
    c.signal.addEventListener('abort', () => seen.push(c.signal.reason))
    c.abort(reason)
    c.abort(new Error('again'))
    expect(seen).toEqual([reason])
    expect(c.signal.reason).toBe(reason)
    expect(reason.stack).toMatch(/^Error: stop\n\s+at /)

    const plain = new AbortController()
    plain.abort('a string')
    expect(plain.signal.reason).toBe('a string')
    const none = new AbortController()
    none.abort()
    expect(none.signal.reason).toBeInstanceOf(DOMException)
    expect((none.signal.reason as DOMException).name).toBe('AbortError')
  })
})
