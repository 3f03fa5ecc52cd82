import os from 'node:os'
import { benchArgs } from './bench-args'
import { createLlmClient } from '../lib/llm/client'
import { fakeLlmChild, quantile } from './bench-support'
import type { RecordedRequest } from '../lib/llm/fake-server'

const values = benchArgs(
  `Usage: npm run bench:llm -- [options]

The LLM client against the fake OpenAI-compatible server (no database): calls per second and
latency percentiles. Last line: JSON.

  --calls N          measured calls (default 1000)
  --latency MS       the server's latency (default 50)
  --concurrency N    calls at once (default 32)
  --warmup N         calls before measuring (default 200)
  --transport T      node (Parley's keep-alive transport) or fetch (default node)
  -h, --help         this text`,
  {
    calls: { type: 'string', default: '1000' },
    latency: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '200' },
    transport: { type: 'string', default: 'node' },
  },
)
const calls = Number(values.calls)
const latency = Number(values.latency)
const concurrency = Number(values.concurrency)
const warmup = Number(values.warmup)
const transport = values.transport === 'fetch' ? 'fetch' : 'node'

const fake = await fakeLlmChild({ latencyMs: latency })

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d

try {
  const baseURL = fake.url
  const admin = baseURL.replace(/\/v1$/, '/_fake')

  const client = createLlmClient({
    id: `bench-${process.pid}`,
    baseURL,
    apiKey: 'bench-key',
    timeoutMs: 30_000,
    maxConcurrency: concurrency,
    maxRetries: 0,
    transport,
  })
  const params = (i: number) => ({
    model: 'fake-model',
    messages: [
      { role: 'system' as const, content: 'You are a benchmark.' },
      { role: 'user' as const, content: `Call number ${i}: say something short.` },
    ],
  })

  // Warm-up (JIT, connection pool), not counted.
  await Promise.all(Array.from({ length: warmup }, (_, i) => client.chat(params(-i))))
  await fetch(`${admin}/reset`, { method: 'POST' })

  const perCall: { total: number; queued: number; attempt: number; requestId?: string }[] = []
  const load = os.loadavg()[0]!
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const start = performance.now()
      const r = await client.chat(params(i))
      const total = performance.now() - start
      const a = r.attempts[0]!
      perCall.push({
        total,
        queued: a.queuedMs,
        attempt: a.latencyMs,
        ...(a.requestId ? { requestId: a.requestId } : {}),
      })
    }),
  )
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)

  const seen = (await (await fetch(`${admin}/requests`)).json()) as RecordedRequest[]
  const serverMs = new Map(seen.map((r) => [r.id, r.durationMs ?? Number.NaN]))
  const overhead: number[] = []
  const sdkOverhead: number[] = []
  const server: number[] = []
  for (const c of perCall) {
    const s = c.requestId ? serverMs.get(c.requestId) : undefined
    if (s === undefined || Number.isNaN(s)) throw new Error(`no server record for ${c.requestId}`)
    server.push(s)
    overhead.push(c.total - c.queued - s)
    sdkOverhead.push(c.attempt - s)
  }
  for (const xs of [overhead, sdkOverhead, server]) xs.sort((a, b) => a - b)

  const ideal = (calls * latency) / concurrency
  const result = {
    calls,
    latency_ms: latency,
    concurrency,
    warmup_calls: warmup,
    transport,
    server_requests: seen.length,
    max_in_flight: client.limiter.maxActive,
    wall_ms: round(wall, 1),
    ideal_ms: round(ideal, 1),
    ratio: round(wall / ideal),
    overhead_p50_ms: round(quantile(overhead, 0.5)),
    overhead_p95_ms: round(quantile(overhead, 0.95)),
    overhead_max_ms: round(quantile(overhead, 1)),
    attempt_overhead_p50_ms: round(quantile(sdkOverhead, 0.5)),
    server_ms_p50: round(quantile(server, 0.5)),
    client_cpu_ms_per_call: round((cpu.user + cpu.system) / 1000 / calls),
    cpus: os.availableParallelism(),
    loadavg_1m: round(load, 2),
    meets_ratio_target: wall / ideal <= 1.15,
    meets_overhead_target: quantile(overhead, 0.5) < 2,
  }
  console.log(
    `wall ${result.wall_ms} ms vs ideal ${result.ideal_ms} ms (×${result.ratio}); overhead p50 ${result.overhead_p50_ms} ms, p95 ${result.overhead_p95_ms} ms`,
  )
  console.log(JSON.stringify(result))
} finally {
  fake.stop()
}
