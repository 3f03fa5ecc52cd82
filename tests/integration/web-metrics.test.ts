import { afterAll, describe, expect, it } from 'vitest'
import { freePort, hasBuild, type Proc, startWeb } from '../support/processes'

/**
 * Prometheus scrapes of the production web server (scripts/serve.mjs with two web processes on one
 * port): a scrape lands on either process, and each answers for both (aggregated by the primary),
 * so a counter never goes backwards from one scrape to the next. Without that, scrapes alternated
 * between the two processes' own counters, e.g. their CPU seconds, and every second one jumped.
 */
const TOKEN = 'metrics-token-metrics-token'
let server: Proc | undefined
afterAll(async () => {
  await server?.stop('SIGKILL')
})

/** The samples of a scrape that must never decrease: counters, and histograms' buckets, sums and counts. */
function monotonicSamples(text: string): Map<string, number> {
  const counters = new Set<string>()
  const histograms = new Set<string>()
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (counter|histogram)$/.exec(line)
    if (type) (type[2] === 'counter' ? counters : histograms).add(type[1] as string)
    if (!line || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line)
    if (!m) continue
    const name = m[1] as string
    const base = name.replace(/_(bucket|sum|count)$/, '')
    if (!counters.has(name) && !histograms.has(base)) continue
    const key = `${name}${m[2] ?? ''}`
    expect(out.has(key), `${key} appears once per scrape`).toBe(false)
    out.set(key, Number(m[3]))
  }
  return out
}

describe.runIf(hasBuild())('metrics of several web processes', () => {
  it('every scrape answers for all processes: no counter ever goes backwards', async () => {
    const port = await freePort()
    server = await startWeb(
      port,
      { PARLEY_WEB_PROCESSES: '2', PARLEY_WORKERS: '0', PARLEY_METRICS_TOKEN: TOKEN },
      { serve: true },
    )
    const scrape = async () => {
      // A new connection each time, so the cluster hands them to the processes in turn.
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/metrics`, {
        headers: { authorization: `Bearer ${TOKEN}`, connection: 'close' },
      })
      expect(res.status).toBe(200)
      return res.text()
    }
    let previous = monotonicSamples(await scrape())
    expect(previous.get('parley_process_cpu_seconds_total')).toBeGreaterThan(0)
    const backwards: string[] = []
    for (let i = 0; i < 20; i++) {
      // Some work between scrapes, on both processes.
      await Promise.all(
        Array.from({ length: 4 }, () =>
          fetch(`http://127.0.0.1:${port}/api/v1/health`, { headers: { connection: 'close' } }).then((r) => r.text()),
        ),
      )
      const now = monotonicSamples(await scrape())
      for (const [key, value] of now) {
        const before = previous.get(key)
        if (before !== undefined && value < before) backwards.push(`${key}: ${before} → ${value}`)
      }
      previous = now
    }
    expect(backwards).toEqual([])
  }, 120_000)
})
