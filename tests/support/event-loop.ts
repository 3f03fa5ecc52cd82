import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { db } from '@/lib/server/db'

export interface LoopReport<T> {
  result: T
  /** Event-loop delay while `work` ran, in ms (perf_hooks histogram, 10 ms resolution). */
  p99Ms: number
  maxMs: number
  /** A health check's query (`SELECT 1` through Prisma, as /api/v1/health does) every 50 ms meanwhile. */
  pings: number
  pingP99Ms: number
  pingMaxMs: number
}

/**
 * Run `work` while measuring how responsive this process stays: the event loop's delay, and how
 * long a concurrent health query takes. A blocked loop shows in the maximum (one long block is a
 * single sample, which a percentile hides) and in the pings.
 */
export async function measureLoop<T>(work: () => Promise<T>): Promise<LoopReport<T>> {
  const h = monitorEventLoopDelay({ resolution: 10 })
  const pings: number[] = []
  let running = true
  h.enable()
  const pinger = (async () => {
    while (running) {
      const t0 = performance.now()
      await db.$queryRaw`SELECT 1`
      pings.push(performance.now() - t0)
      await sleep(50)
    }
  })()
  try {
    const result = await work()
    running = false
    await pinger
    h.disable()
    const sorted = [...pings].sort((a, b) => a - b)
    return {
      result,
      p99Ms: h.percentile(99) / 1e6,
      maxMs: h.max / 1e6,
      pings: pings.length,
      pingP99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
      pingMaxMs: sorted.at(-1) ?? 0,
    }
  } finally {
    running = false
    h.disable()
  }
}
