import { describe, expect, it } from 'vitest'
import { ConnectionLimiter, getConnectionLimiter, TokenBucket } from './limiter'
import { rejectionOf, uniqueId } from './test-support'

/** A manual clock for deterministic bucket arithmetic. */
function clock() {
  let t = 0
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms
    },
  }
}

describe('TokenBucket', () => {
  it('starts full, refills continuously and never exceeds its capacity', () => {
    const c = clock()
    const b = new TokenBucket(10, 0.01, c.now) // 10 per second
    expect(b.available()).toBe(10)
    b.take(10)
    expect(b.waitMs(1)).toBe(100)
    c.advance(50)
    expect(b.available()).toBeCloseTo(0.5)
    c.advance(10_000)
    expect(b.available()).toBe(10)
  })

  it('admits a request larger than the capacity once full, going negative', () => {
    const c = clock()
    const b = new TokenBucket(10, 0.01, c.now)
    expect(b.waitMs(25)).toBe(0)
    b.take(25)
    expect(b.available()).toBe(-15)
    expect(b.waitMs(1)).toBe(1600)
  })
})

describe('ConnectionLimiter', () => {
  it('hands out at most maxConcurrency slots, FIFO', async () => {
    const l = new ConnectionLimiter({ maxConcurrency: 2 })
    const a = await l.acquire(0)
    const b = await l.acquire(0)
    const order: string[] = []
    const c = l.acquire(0).then((p) => {
      order.push('c')
      return p
    })
    const d = l.acquire(0).then((p) => {
      order.push('d')
      return p
    })
    await new Promise((r) => setTimeout(r, 10))
    expect(l.inFlight).toBe(2)
    expect(l.waiting).toBe(2)
    a.release()
    a.release() // idempotent
    const pc = await c
    expect(order).toEqual(['c'])
    expect(l.inFlight).toBe(2)
    b.release()
    const pd = await d
    expect(order).toEqual(['c', 'd'])
    pc.release()
    pd.release()
    expect(l.inFlight).toBe(0)
    expect(l.maxActive).toBe(2)
  })

  it('removes an aborted waiter from the queue and rejects with the reason', async () => {
    const l = new ConnectionLimiter({ maxConcurrency: 1 })
    const held = await l.acquire(0)
    const ac = new AbortController()
    const waiting = l.acquire(0, ac.signal)
    const next = l.acquire(0)
    expect(l.waiting).toBe(2)
    ac.abort(new Error('stop'))
    expect(((await rejectionOf(waiting)) as Error).message).toBe('stop')
    expect(l.waiting).toBe(1)
    held.release()
    ;(await next).release()
    expect(l.inFlight).toBe(0)
  })

  it('rejects at once when the signal is already aborted', async () => {
    const l = new ConnectionLimiter({ maxConcurrency: 1 })
    const ac = new AbortController()
    ac.abort()
    await rejectionOf(l.acquire(0, ac.signal))
    expect(l.inFlight).toBe(0)
  })

  it('spaces requests by the request rate after the burst', async () => {
    // 600/min = 10/s with a burst of 0.3 s = 3 requests.
    const l = new ConnectionLimiter({ maxConcurrency: 100, requestsPerMinute: 600, burstSeconds: 0.3 })
    const t0 = performance.now()
    const admitted: number[] = []
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const p = await l.acquire(0)
        admitted.push(performance.now() - t0)
        p.release()
      }),
    )
    admitted.sort((a, b) => a - b)
    expect(admitted.slice(0, 3).every((t) => t < 30)).toBe(true)
    // The 8th waits for 5 refills of 100 ms.
    expect(admitted[7]!).toBeGreaterThanOrEqual(500 - 5)
    expect(admitted[7]!).toBeLessThan(900)
  })

  it('charges estimated tokens and reconciles them with the real usage', async () => {
    const c = clock()
    const l = new ConnectionLimiter({ maxConcurrency: 10, tokensPerMinute: 60_000, burstSeconds: 1 }, c.now)
    // Capacity 1000 tokens. Take 900, then report that 1000 more were really used.
    const p = await l.acquire(900)
    p.adjustTokens(1000)
    p.release()
    let admitted = false
    const next = l.acquire(100).then((q) => {
      admitted = true
      q.release()
    })
    await new Promise((r) => setTimeout(r, 20))
    expect(admitted).toBe(false) // the balance is -900: it needs 1000 ms of refill
    c.advance(1000)
    await new Promise((r) => setTimeout(r, 1100))
    await next
    expect(admitted).toBe(true)
  })

  it('pause() holds every caller until it ends', async () => {
    const l = new ConnectionLimiter({ maxConcurrency: 10 })
    l.pause(150)
    const t0 = performance.now()
    const p = await l.acquire(0)
    expect(performance.now() - t0).toBeGreaterThanOrEqual(145)
    p.release()
  })

  it('is shared per connection id and reconfigured by later callers', () => {
    const id = uniqueId('limiter')
    const a = getConnectionLimiter(id, { maxConcurrency: 2 })
    const b = getConnectionLimiter(id, { maxConcurrency: 5 })
    expect(a).toBe(b)
    expect(a.limits.maxConcurrency).toBe(5)
    expect(getConnectionLimiter(uniqueId('limiter'), { maxConcurrency: 1 })).not.toBe(a)
  })
})
