/**
 * `npm run bench:llm`: throughput and client overhead of lib/llm against the fake server.
 *
 * Runs N calls (default 1000) through createLlmClient at a fixed server latency (default 50 ms)
 * with a concurrency limit (default 32). The fake server runs in a child process so its work does
 * not share the client's event loop. Reports:
 *   - wall_ms vs ideal_ms = calls × latency / concurrency (target ratio ≤ 1.15);
 *   - overhead per call = client-side time of the call minus its time queued for a slot minus the
 *     time the server spent on the request (as the server measured it): our code, the SDK, HTTP
 *     on loopback (target p50 < 2 ms).
 * The last line of output is one JSON object.
 *
 * It also reports the client's CPU time per call and the 1-minute load average, because on a shared
 * machine the wall-clock numbers mostly measure the neighbours.
 *
 *   npx tsx scripts/bench-llm.ts [--calls 1000] [--latency 50] [--concurrency 32] [--warmup 200]
 *                                [--transport node|fetch]
 */
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { createLlmClient } from '../lib/llm/client'
import type { RecordedRequest } from '../lib/llm/fake-server'

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    latency: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '200' },
    transport: { type: 'string', default: 'node' },
  },
})
const calls = Number(values.calls)
const latency = Number(values.latency)
const concurrency = Number(values.concurrency)
const warmup = Number(values.warmup)
const transport = values.transport === 'fetch' ? 'fetch' : 'node'

const root = path.resolve(import.meta.dirname, '..')
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    path.join(root, 'lib/llm/fake-server-cli.ts'),
    '--port',
    '0',
    '--latency',
    String(latency),
    '--no-bodies',
  ],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
)

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[i]!
}
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d

try {
  const baseURL = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url))
    child.once('exit', (code) => reject(new Error(`fake server exited with ${code}`)))
  })
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
  child.kill('SIGTERM')
}
