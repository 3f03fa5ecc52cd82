import { spawn, spawnSync } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { createProxy } from 'proxy'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GET as ready } from '@/app/api/v1/ready/route'
import { GET as metrics } from '@/app/api/v1/metrics/route'
import { createLlmClient } from '@/lib/llm/client'
import { subscribe } from '@/lib/server/live'
import { installMetrics } from '@/lib/server/metrics'
import { useFakeLlm } from '../support/llm'
import { freePort, startWorker, waitFor } from '../support/processes'

const fake = useFakeLlm()
const ROOT = path.resolve(import.meta.dirname, '../..')

/** Run `parley <args>` to its end; returns its exit code and output. */
function parley(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/parley.mjs'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

describe('configuration is validated at start', () => {
  it('parley worker refuses PARLEY_WORKERS=four with a message naming the variable', () => {
    const r = parley(['worker'], { PARLEY_WORKERS: 'four' })
    expect(r.code).toBe(1)
    expect(r.out).toContain('PARLEY_WORKERS: expected a whole number from 0 to 1000 (got "four")')
  })

  it('and a bad pool size or log format the same way', () => {
    const r = parley(['worker'], { PARLEY_DB_POOL_MAX: '-3', PARLEY_LOG_FORMAT: 'xml' })
    expect(r.code).toBe(1)
    expect(r.out).toContain('PARLEY_DB_POOL_MAX')
    expect(r.out).toContain('PARLEY_LOG_FORMAT: expected json or pretty (got "xml")')
  })
})

describe('the health endpoint of parley worker', () => {
  it('answers /health with its heartbeat and jobs, /metrics with the token, and exits on SIGTERM', async () => {
    // A free port: a fixed one was taken when two suites ran on one machine, and the worker exited 1.
    const port = await freePort()
    const worker = startWorker(
      {
        PARLEY_WORKER_HEALTH_PORT: String(port),
        PARLEY_HEARTBEAT_SECONDS: '1',
        PARLEY_METRICS_TOKEN: 'worker-metrics-token-01',
      },
      ['--concurrency', '1'],
    )
    try {
      const health = await waitFor(
        'the health port',
        () =>
          fetch(`http://127.0.0.1:${port}/health`)
            .then((r) => r.json())
            .catch(() => undefined),
        (h) => h?.status === 'ok',
        30_000,
      )
      expect(health).toMatchObject({ status: 'ok', database: 'ok', activeJobs: 0 })
      expect(health.heartbeatAgeSeconds).toBeLessThan(3)
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401)
      const m = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: 'Bearer worker-metrics-token-01' },
      })
      expect(await m.text()).toContain('parley_jobs_active 0')
    } finally {
      const { code, ms } = await worker.stop('SIGTERM')
      expect(code).toBe(0)
      expect(ms).toBeLessThan(5000)
    }
  }, 60_000)
})

describe('readiness and metrics', () => {
  const TOKEN = 'metrics-token-0123456789'
  beforeAll(() => {
    process.env.PARLEY_METRICS_TOKEN = TOKEN
    installMetrics()
  })
  afterAll(() => {
    delete process.env.PARLEY_METRICS_TOKEN
  })

  it('/api/v1/ready answers 200 with the database reachable', async () => {
    const res = await ready()
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ready', database: 'ok' })
  })

  it('/api/v1/metrics needs the token: 401 without it, 404 when none is configured', async () => {
    expect((await metrics(new Request('http://x/api/v1/metrics'))).status).toBe(401)
    const wrong = new Request('http://x/api/v1/metrics', { headers: { authorization: 'Bearer nope' } })
    expect((await metrics(wrong)).status).toBe(401)
    delete process.env.PARLEY_METRICS_TOKEN
    expect((await metrics(new Request('http://x/api/v1/metrics'))).status).toBe(404)
    process.env.PARLEY_METRICS_TOKEN = TOKEN
  })

  it('counts LLM calls in flight, 429s and latency per connection, the queue, live subscribers and the pools', async () => {
    fake().setScript([
      { match: { contains: 'limited' }, replies: [{ fault: '429', retryAfterMs: 50 }, { text: 'ok' }] },
      { match: { contains: 'slow' }, replies: [{ text: 'slow', latencyMs: 600 }] },
    ])
    const client = createLlmClient({
      id: 'metrics-conn',
      baseURL: fake().url,
      apiKey: 'k',
      maxConcurrency: 4,
      timeoutMs: 5000,
    })
    await client.chat({ model: 'gen', messages: [{ role: 'user', content: 'limited' }] })
    const off = await subscribe('session:metrics', () => {})
    const slow = client.chat({ model: 'gen', messages: [{ role: 'user', content: 'slow' }] })
    await new Promise((r) => setTimeout(r, 250))
    const res = await metrics(new Request('http://x/api/v1/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    const text = await res.text()
    await slow
    off()
    expect(text).toContain('parley_llm_in_flight{connection="metrics-conn"} 1')
    expect(text).toContain('parley_llm_rate_limited_total{connection="metrics-conn"} 1')
    expect(text).toMatch(/parley_llm_attempt_seconds_count\{connection="metrics-conn"\} 2/)
    expect(text).toMatch(/parley_llm_attempts_total\{connection="metrics-conn",outcome="rate_limited"\} 1/)
    expect(text).toMatch(/parley_live_subscribers 1/)
    expect(text).toMatch(/parley_db_pool_connections\{pool="hot",state="max"\} \d+/)
    expect(text).toContain('# TYPE parley_queue_jobs gauge')
    expect(text).toContain('parley_process_cpu_seconds_total')
  })
})

describe('the LLM transport honours HTTPS_PROXY / HTTP_PROXY', () => {
  let proxy: http.Server
  let proxyUrl: string
  const seen: string[] = []
  beforeAll(async () => {
    proxy = createProxy(http.createServer())
    proxy.on('request', (req: http.IncomingMessage) => seen.push(`${req.method} ${req.url}`))
    proxy.on('connect', (req: http.IncomingMessage) => seen.push(`CONNECT ${req.url}`))
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY']) delete process.env[k]
    proxy.closeAllConnections?.()
    await new Promise((r) => proxy.close(r))
  })

  it('sends the calls through the proxy, and directly to a NO_PROXY host', async () => {
    fake().setScript([])
    process.env.HTTP_PROXY = proxyUrl
    process.env.HTTPS_PROXY = proxyUrl
    const client = createLlmClient({
      id: 'proxied',
      baseURL: fake().url,
      apiKey: 'k',
      maxConcurrency: 2,
      timeoutMs: 5000,
    })
    const r = await client.chat({ model: 'gen', messages: [{ role: 'user', content: 'via the proxy' }] })
    expect(r.text.length).toBeGreaterThan(0)
    // undici tunnels through the proxy with CONNECT, for http targets too.
    expect(seen).toEqual([`CONNECT 127.0.0.1:${fake().port}`])
    // The fake server saw the request the proxy forwarded.
    expect(fake().requests.at(-1)?.body).toMatchObject({ messages: [{ content: 'via the proxy' }] })

    process.env.NO_PROXY = '127.0.0.1'
    const direct = createLlmClient({
      id: 'no-proxy',
      baseURL: fake().url,
      apiKey: 'k',
      maxConcurrency: 2,
      timeoutMs: 5000,
    })
    await direct.chat({ model: 'gen', messages: [{ role: 'user', content: 'direct' }] })
    expect(seen).toHaveLength(1)
  })

  it('without a proxy setting nothing goes through it', async () => {
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY']) delete process.env[k]
    const before = seen.length
    const client = createLlmClient({
      id: 'plain',
      baseURL: fake().url,
      apiKey: 'k',
      maxConcurrency: 2,
      timeoutMs: 5000,
    })
    await client.chat({ model: 'gen', messages: [{ role: 'user', content: 'plain' }] })
    expect(seen).toHaveLength(before)
  })
})

describe('logs are JSON lines with a request id', () => {
  it('a line logged inside a request carries its id; a sane X-Request-Id is kept, anything else replaced', async () => {
    const script = `
      const { log, withRequestId, requestIdFrom } = await import('./lib/server/log.ts')
      withRequestId(requestIdFrom('abc-123'), () => log().info({ sessionId: 's1' }, 'step failed'))
      withRequestId(requestIdFrom('bad id\\n'), () => log().warn('other'))
      log().info('outside')
    `
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, PARLEY_LOG_FORMAT: 'json', PARLEY_PROCESS: 'worker' },
    })
    let out = ''
    child.stdout.on('data', (b) => (out += b))
    await new Promise((r) => child.once('exit', r))
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines[0]).toMatchObject({ level: 30, msg: 'step failed', reqId: 'abc-123', sessionId: 's1', proc: 'worker' })
    expect(lines[1].reqId).toMatch(/^[0-9a-f-]{36}$/)
    expect(lines[2].reqId).toBeUndefined()
  })
})
