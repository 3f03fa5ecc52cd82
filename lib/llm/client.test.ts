import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type AttemptRecord, createLlmClient, type LlmConnection, LlmError, parseRetryAfter } from './client'
import { type FakeLlmServer, startFakeLlmServer } from './fake-server'
import { approxTokens } from './text'
import { rejectionOf, uniqueId, waitFor } from './test-support'

const API_KEY = 'sk-test-SECRET-0123456789abcdef'

let server: FakeLlmServer

beforeAll(async () => {
  server = await startFakeLlmServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  server.setScript([])
  server.reset()
})

function client(over: Partial<LlmConnection> = {}) {
  return createLlmClient({
    id: uniqueId(),
    baseURL: server.url,
    apiKey: API_KEY,
    timeoutMs: 5000,
    maxConcurrency: 8,
    retryBaseMs: 5,
    ...over,
  })
}

const ask = (content: string, model = 'fake-model') => ({ model, messages: [{ role: 'user' as const, content }] })

/** Attempt records must survive a JSON round trip unchanged (the call log stores them as JSON). */
function expectJsonSerialisable(attempts: AttemptRecord[]) {
  expect(JSON.parse(JSON.stringify(attempts))).toEqual(attempts)
}

describe('chat', () => {
  it('returns the text, usage, model and one complete attempt record', async () => {
    const seen: AttemptRecord[] = []
    const r = await client().chat(ask('hello there'), { onAttempt: (a) => void seen.push(a) })
    expect(r.text).toBe('Echo: hello there')
    expect(r.model).toBe('fake-model')
    expect(r.finishReason).toBe('stop')
    expect(r.usage).toEqual({
      prompt_tokens: approxTokens('hello there'),
      completion_tokens: approxTokens('Echo: hello there'),
      total_tokens: approxTokens('hello there') + approxTokens('Echo: hello there'),
    })
    expect(r.attempts).toHaveLength(1)
    const a = r.attempts[0]!
    expect(a).toMatchObject({ attempt: 1, status: 'ok', httpStatus: 200, request: ask('hello there') })
    expect(a.requestId).toBe(server.requests[0]!.id)
    expect(r.requestId).toBe(a.requestId)
    expect(a.response?.choices[0]?.message.content).toBe('Echo: hello there')
    expect(a.usage).toEqual(r.usage)
    expect(Number.isNaN(Date.parse(a.startedAt))).toBe(false)
    expect(a.latencyMs).toBeGreaterThan(0)
    expect(seen).toEqual(r.attempts)
    expectJsonSerialisable(r.attempts)
    // The server got exactly what the record says was sent.
    expect(server.requests[0]!.body).toEqual(a.request)
  })

  it('sends extra headers and lists models', async () => {
    const c = client({ extraHeaders: { 'x-parley-test': 'yes' } })
    expect(await c.listModels()).toContain('fake-model')
    expect(server.requests[0]!.path).toBe('/v1/models')
  })

  it('does not retry other 4xx errors', async () => {
    server.setScript([{ replies: [{ fault: 'status', status: 400, message: 'bad parameter' }] }])
    const e = await rejectionOf(client({ maxRetries: 3 }).chat(ask('x')))
    expect(e).toBeInstanceOf(LlmError)
    const err = e as LlmError
    expect(err.kind).toBe('client')
    expect(err.httpStatus).toBe(400)
    expect(err.message).toContain('bad parameter')
    expect(err.attempts).toHaveLength(1)
    expect(server.requests).toHaveLength(1)
  })
})

describe('streaming', () => {
  it('delivers tokens incrementally and records time to first token', async () => {
    const words = 'one two three four five six seven eight nine ten'
    server.setScript([{ replies: [{ text: words, latencyMs: 30, chunkDelayMs: 40 }] }])
    const arrivals: number[] = []
    const deltas: string[] = []
    const t0 = performance.now()
    const r = await client().stream(ask('count'), {
      onToken: (d, info) => {
        arrivals.push(performance.now() - t0)
        deltas.push(d)
        expect(info.attempt).toBe(1)
      },
    })
    expect(r.text).toBe(words)
    expect(deltas.join('')).toBe(words)
    expect(deltas.length).toBe(10)
    // Incremental: the last token arrived well after the first (9 gaps of 40 ms on the server).
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(250)
    expect(r.ttftMs).toBeGreaterThanOrEqual(25)
    expect(r.ttftMs!).toBeLessThan(r.attempts[0]!.latencyMs - 250)
    expect(r.usage.completion_tokens).toBe(approxTokens(words))
    expect(r.attempts[0]).toMatchObject({
      status: 'ok',
      request: { stream: true, stream_options: { include_usage: true } },
    })
    expect(r.attempts[0]!.response?.choices[0]?.message.content).toBe(words)
    expect(server.requests[0]).toMatchObject({ stream: true })
    expectJsonSerialisable(r.attempts)
  })

  it('retries a truncated stream (connection cut) and tells onToken the attempt changed', async () => {
    server.setScript([{ replies: [{ fault: 'truncate' }, { text: 'the full answer' }] }])
    const seenAttempts = new Set<number>()
    const r = await client().stream(ask('x'), { onToken: (_d, info) => seenAttempts.add(info.attempt) })
    expect(r.text).toBe('the full answer')
    expect(r.attempts.map((a) => a.status)).toEqual(['error', 'ok'])
    expect(r.attempts[0]!.errorKind).toBe('truncated')
    expect(r.attempts[0]!.partialText?.length).toBeGreaterThan(0)
    expect([...seenAttempts]).toEqual([1, 2])
  })

  it('treats a stream that ends cleanly without finishing as truncated', async () => {
    server.setScript([{ replies: [{ fault: 'truncate', clean: true }, { text: 'done' }] }])
    const r = await client().stream(ask('x'))
    expect(r.attempts[0]!.errorKind).toBe('truncated')
    expect(r.text).toBe('done')
  })

  it('retries malformed stream chunks', async () => {
    server.setScript([{ replies: [{ fault: 'malformed' }, { text: 'fine' }] }])
    const r = await client().stream(ask('x'))
    expect(r.attempts[0]!.errorKind).toBe('bad_response')
    expect(r.text).toBe('fine')
  })
})

describe('malformed and truncated plain responses', () => {
  it('retries a malformed JSON body', async () => {
    server.setScript([{ replies: [{ fault: 'malformed' }, { text: 'fine' }] }])
    const r = await client().chat(ask('x'))
    expect(r.attempts.map((a) => a.errorKind ?? a.status)).toEqual(['bad_response', 'ok'])
    expect(r.text).toBe('fine')
  })

  it('retries a body cut off mid-way', async () => {
    server.setScript([{ replies: [{ fault: 'truncate' }, { text: 'fine' }] }])
    const r = await client().chat(ask('x'))
    expect(r.attempts[0]).toMatchObject({ status: 'error', errorKind: 'truncated' })
    expect(r.text).toBe('fine')
  })
})

describe('structured output', () => {
  const Label = z.object({ label: z.enum(['relevant', 'irrelevant']), score: z.number().int().min(0).max(3) })

  it('re-asks after an unparsable reply and returns the typed value (2 attempts recorded)', async () => {
    server.setScript([
      {
        match: { contains: 'Classify' },
        replies: [{ text: 'Sure! It is relevant.' }, { json: { label: 'relevant', score: 2 } }],
      },
    ])
    const seen: AttemptRecord[] = []
    const r = await client().structured(ask('Classify this document. Answer in JSON.'), Label, {
      onAttempt: (a) => void seen.push(a),
    })
    const value: { label: 'relevant' | 'irrelevant'; score: number } = r.value
    expect(value).toEqual({ label: 'relevant', score: 2 })
    expect(r.attempts).toHaveLength(2)
    expect(seen).toEqual(r.attempts)
    const [bad, good] = r.attempts as [AttemptRecord, AttemptRecord]
    expect(bad).toMatchObject({ attempt: 1, ask: 0, status: 'error', errorKind: 'invalid_output' })
    expect(bad.validationError).toMatch(/not valid JSON/)
    expect(bad.response?.choices[0]?.message.content).toBe('Sure! It is relevant.')
    expect(good).toMatchObject({ attempt: 2, ask: 1, status: 'ok' })
    // JSON mode was requested, and the re-ask carried the bad reply and the error.
    expect(bad.request.response_format).toEqual({ type: 'json_object' })
    const msgs = good.request.messages
    expect(msgs).toHaveLength(3)
    expect(msgs[1]).toEqual({ role: 'assistant', content: 'Sure! It is relevant.' })
    expect(msgs[2]?.role).toBe('user')
    expect(String(msgs[2]?.content)).toContain('not valid JSON')
    expect(r.usage.total_tokens).toBe(bad.usage!.total_tokens + good.usage!.total_tokens)
    expectJsonSerialisable(r.attempts)
  })

  it('re-asks with the zod validation error when the JSON has the wrong shape', async () => {
    server.setScript([
      { replies: [{ json: { label: 'maybe', score: 9 } }, { json: { label: 'irrelevant', score: 0 } }] },
    ])
    const r = await client().structured(ask('Classify. JSON please.'), Label)
    expect(r.value).toEqual({ label: 'irrelevant', score: 0 })
    const err = r.attempts[0]!.validationError!
    expect(err).toContain('label')
    expect(err).toContain('score')
    expect(String(r.attempts[1]!.request.messages[2]?.content)).toContain('label')
  })

  it('gives up after maxReasks with every attempt recorded', async () => {
    server.setScript([{ replies: [{ text: 'never JSON' }] }])
    const e = (await rejectionOf(client().structured(ask('JSON'), Label, { maxReasks: 2 }))) as LlmError
    expect(e).toBeInstanceOf(LlmError)
    expect(e.kind).toBe('invalid_output')
    expect(e.attempts.map((a) => a.ask)).toEqual([0, 1, 2])
    expect(e.attempts.every((a) => a.errorKind === 'invalid_output')).toBe(true)
    expect(server.requests).toHaveLength(3)
  })

  it('counts transport retries and re-asks in one attempt sequence, and can stream', async () => {
    server.setScript([
      { replies: [{ fault: '500' }, { text: '{"label": "relevant"' }, { json: { label: 'relevant', score: 1 } }] },
    ])
    const r = await client().structured(ask('JSON'), Label, { stream: true })
    expect(r.value).toEqual({ label: 'relevant', score: 1 })
    expect(r.attempts.map((a) => [a.attempt, a.ask, a.errorKind ?? 'ok'])).toEqual([
      [1, 0, 'server'],
      [2, 0, 'invalid_output'],
      [3, 1, 'ok'],
    ])
  })
})

describe('retries', () => {
  it('honours Retry-After (seconds) on 429, then succeeds', async () => {
    server.setScript([{ replies: [{ fault: '429', retryAfter: 1 }, { text: 'ok' }] }])
    const t0 = performance.now()
    const r = await client({ retryBaseMs: 1 }).chat(ask('x'))
    const elapsed = performance.now() - t0
    expect(r.text).toBe('ok')
    expect(r.attempts[0]).toMatchObject({
      status: 'error',
      errorKind: 'rate_limited',
      httpStatus: 429,
      retryAfterMs: 1000,
      backoffMs: 1000,
    })
    const [first, second] = server.requests
    // Measured on the server: the retry arrived at least Retry-After after the 429 was sent.
    const gap = second!.receivedAt - (first!.receivedAt + first!.durationMs!)
    expect(gap).toBeGreaterThanOrEqual(1000 - 2)
    expect(elapsed).toBeGreaterThanOrEqual(1000)
  })

  it('honours retry-after-ms', async () => {
    server.setScript([{ replies: [{ fault: '429', retryAfterMs: 300 }, { text: 'ok' }] }])
    const t0 = performance.now()
    const r = await client({ retryBaseMs: 1 }).chat(ask('x'))
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300)
    expect(r.attempts[0]!.retryAfterMs).toBe(300)
  })

  it('fails at once when Retry-After exceeds maxRetryAfterMs', async () => {
    server.setScript([{ replies: [{ fault: '429', retryAfter: 120 }] }])
    const e = (await rejectionOf(client({ maxRetryAfterMs: 10_000 }).chat(ask('x')))) as LlmError
    expect(e.kind).toBe('rate_limited')
    expect(e.retryAfterMs).toBe(120_000)
    expect(e.attempts).toHaveLength(1)
  })

  it('retries 500s with exponential backoff and fails with the error on every attempt', async () => {
    server.setScript([{ replies: [{ fault: '500' }] }])
    const e = (await rejectionOf(
      client({ maxRetries: 3, retryBaseMs: 40, random: () => 0.999 }).chat(ask('x')),
    )) as LlmError
    expect(e).toBeInstanceOf(LlmError)
    expect(e.kind).toBe('server')
    expect(e.httpStatus).toBe(500)
    expect(e.message).toContain('after 4 attempts')
    expect(e.attempts).toHaveLength(4)
    for (const a of e.attempts) {
      expect(a).toMatchObject({ status: 'error', errorKind: 'server', httpStatus: 500 })
      expect(a.error).toContain('Internal server error')
    }
    // Full jitter draws below 40, 80, 160 ms; with random()≈1 the delays are just below the ceilings.
    expect(e.attempts.map((a) => a.backoffMs)).toEqual([39, 79, 159, undefined])
    const reqs = server.requests
    expect(reqs).toHaveLength(4)
    for (let i = 1; i < reqs.length; i++) {
      const gap = reqs[i]!.receivedAt - (reqs[i - 1]!.receivedAt + reqs[i - 1]!.durationMs!)
      expect(gap).toBeGreaterThanOrEqual(e.attempts[i - 1]!.backoffMs! - 2)
    }
    expectJsonSerialisable(e.attempts)
  })

  it('times out a hanging server, retries, and fails with a timeout', async () => {
    server.setScript([{ replies: [{ fault: 'hang' }] }])
    const t0 = performance.now()
    const e = (await rejectionOf(client({ timeoutMs: 150, maxRetries: 2, retryBaseMs: 1 }).chat(ask('x')))) as LlmError
    expect(performance.now() - t0).toBeGreaterThanOrEqual(3 * 150)
    expect(e.kind).toBe('timeout')
    expect(e.attempts).toHaveLength(3)
    for (const a of e.attempts) {
      expect(a.errorKind).toBe('timeout')
      expect(a.latencyMs).toBeGreaterThanOrEqual(145)
      expect(a.httpStatus).toBeUndefined()
    }
    await waitFor(() => server.requests.length === 3 && server.requests.every((r) => r.clientClosed), 2000, 'closed')
  })

  it('times out a stream that stalls between chunks', async () => {
    server.setScript([{ replies: [{ text: 'a b c', chunkDelayMs: 1000 }, { text: 'quick' }] }])
    const r = await client({ timeoutMs: 200 }).stream(ask('x'))
    expect(r.attempts[0]!.errorKind).toBe('timeout')
    expect(r.attempts[0]!.partialText).toBe('a ')
    expect(r.text).toBe('quick')
  })

  it('parses Retry-After as seconds, an HTTP date or retry-after-ms', () => {
    const now = Date.parse('2030-01-01T00:00:00Z')
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000)
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:03 GMT' }), now)).toBe(3000)
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined()
  })
})

describe('cancellation', () => {
  it('an abort mid-call rejects promptly and the server sees the connection closed', async () => {
    server.setScript([{ replies: [{ text: 'slow', latencyMs: 5000 }] }])
    const ac = new AbortController()
    const p = client().chat(ask('x'), { signal: ac.signal })
    await waitFor(() => server.inFlight === 1, 2000, 'request to arrive')
    const t0 = performance.now()
    ac.abort()
    const e = (await rejectionOf(p)) as LlmError
    expect(performance.now() - t0).toBeLessThan(100)
    expect(e).toBeInstanceOf(LlmError)
    expect(e.kind).toBe('aborted')
    expect(e.attempts).toHaveLength(1)
    expect(e.attempts[0]!.errorKind).toBe('aborted')
    await waitFor(() => server.requests[0]!.clientClosed, 1000, 'server to see the close')
    expect(server.inFlight).toBe(0)
  })

  it('an abort mid-stream stops the stream', async () => {
    server.setScript([{ replies: [{ text: 'a b c d e f g h', chunkDelayMs: 200 }] }])
    const ac = new AbortController()
    const tokens: string[] = []
    const p = client().stream(ask('x'), {
      signal: ac.signal,
      onToken: (d) => {
        tokens.push(d)
        if (tokens.length === 2) ac.abort()
      },
    })
    const e = (await rejectionOf(p)) as LlmError
    expect(e.kind).toBe('aborted')
    expect(tokens).toHaveLength(2)
    await waitFor(() => server.requests[0]!.clientClosed, 1000, 'server to see the close')
  })

  it('an abort while queued for a slot leaves the queue without a request', async () => {
    server.setScript([{ match: { contains: 'slow' }, replies: [{ text: 'slow', latencyMs: 400 }] }])
    const c = client({ maxConcurrency: 1 })
    const first = c.chat(ask('slow'))
    const ac = new AbortController()
    const second = c.chat(ask('queued'), { signal: ac.signal })
    await waitFor(() => c.limiter.waiting === 1, 1000, 'second call to queue')
    const t0 = performance.now()
    ac.abort()
    const e = (await rejectionOf(second)) as LlmError
    expect(performance.now() - t0).toBeLessThan(50)
    expect(e.kind).toBe('aborted')
    expect(e.attempts).toHaveLength(0)
    await first
    expect(server.requests.map((r) => r.body)).toHaveLength(1)
  })

  it('an abort during a retry backoff ends the call', async () => {
    server.setScript([{ replies: [{ fault: '429', retryAfter: 10 }] }])
    const ac = new AbortController()
    const p = client().chat(ask('x'), { signal: ac.signal })
    await waitFor(() => server.requests[0]?.done === true, 2000, 'the 429')
    ac.abort()
    const e = (await rejectionOf(p)) as LlmError
    expect(e.kind).toBe('aborted')
    expect(e.attempts).toHaveLength(1)
  })
})

describe('limits', () => {
  it('never has more than maxConcurrency calls in flight at the server', async () => {
    server.setScript([{ replies: [{ text: 'ok', latencyMs: 50 }] }])
    const c = client({ maxConcurrency: 4 })
    await Promise.all(Array.from({ length: 24 }, (_, i) => c.chat(ask(`q${i}`))))
    expect(server.requests).toHaveLength(24)
    expect(server.maxInFlight).toBeLessThanOrEqual(4)
    expect(server.maxInFlight).toBe(4)
  })

  it('shares the concurrency limit between clients of the same connection id', async () => {
    server.setScript([{ replies: [{ text: 'ok', latencyMs: 50 }] }])
    const id = uniqueId('shared')
    const a = client({ id, maxConcurrency: 3 })
    const b = client({ id, maxConcurrency: 3 })
    expect(a.limiter).toBe(b.limiter)
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).chat(ask(`q${i}`))))
    expect(server.maxInFlight).toBe(3)
  })

  it('respects requests per minute (count per window)', async () => {
    // 1200 req/min = 20/s; a burst of 0.25 s = 5 requests, then one every 50 ms.
    server.setScript([{ replies: [{ text: 'ok' }] }])
    const c = client({ maxConcurrency: 50, requestsPerMinute: 1200, burstSeconds: 0.25 })
    await Promise.all(Array.from({ length: 25 }, (_, i) => c.chat(ask(`q${i}`))))
    const times = server.requests.map((r) => r.receivedAt).sort((x, y) => x - y)
    const t0 = times[0]!
    // 20 requests beyond the burst need 20 × 50 ms.
    expect(times.at(-1)! - t0).toBeGreaterThanOrEqual(1000 - 20)
    // In any window of w ms, at most burst + w × rate (+1 for a boundary) requests arrive.
    for (const w of [100, 250, 500]) {
      for (const start of times) {
        const n = times.filter((t) => t >= start && t < start + w).length
        expect(n).toBeLessThanOrEqual(5 + Math.ceil((w * 20) / 1000) + 1)
      }
    }
    // Without the limit the same calls arrive all at once.
    server.reset()
    const free = client({ maxConcurrency: 50 })
    await Promise.all(Array.from({ length: 25 }, (_, i) => free.chat(ask(`q${i}`))))
    const freeTimes = server.requests.map((r) => r.receivedAt)
    expect(Math.max(...freeTimes) - Math.min(...freeTimes)).toBeLessThan(500)
  })

  it('respects tokens per minute', async () => {
    // 60 000 tokens/min = 1 token/ms, bucket of 100 tokens; each request is estimated at 40 tokens.
    server.setScript([{ replies: [{ text: 'ok' }] }])
    const content = 'x'.repeat(160)
    const c = client({ maxConcurrency: 50, tokensPerMinute: 60_000, burstSeconds: 0.1 })
    const t0 = performance.now()
    await Promise.all(Array.from({ length: 20 }, () => c.chat(ask(content))))
    const elapsed = performance.now() - t0
    // The 20th request cannot start before 19 × 40 − 100 tokens have refilled.
    expect(elapsed).toBeGreaterThanOrEqual(19 * 40 - 100 - 10)
    expect(elapsed).toBeLessThan(5000)
  })
})

describe('secrets', () => {
  it('never puts the API key in attempt records or error messages', async () => {
    const texts: string[] = []
    const collect = (e: unknown) => {
      const err = e as LlmError
      texts.push(err.message, String(err), err.stack ?? '', JSON.stringify(err.attempts), JSON.stringify(err))
    }
    // A provider that echoes the key in its 401 message.
    server.setScript([{ match: { contains: 'auth' }, replies: [{ fault: '401' }] }])
    const e401 = (await rejectionOf(client().chat(ask('auth')))) as LlmError
    expect(e401.kind).toBe('auth')
    expect(e401.attempts).toHaveLength(1)
    collect(e401)
    // The key was really sent (and the fake server echoed it back).
    expect(server.requests[0]!.authorization).toBe(`Bearer ${API_KEY}`)

    server.setScript([
      { match: { contains: '500' }, replies: [{ fault: '500' }] },
      { match: { contains: 'hang' }, replies: [{ fault: 'hang' }] },
    ])
    collect(await rejectionOf(client({ maxRetries: 1 }).chat(ask('500'))))
    collect(await rejectionOf(client({ maxRetries: 0, timeoutMs: 100 }).chat(ask('hang'))))
    // A provider that shows a masked form of the key.
    server.setScript([
      {
        replies: [
          {
            fault: 'status',
            status: 401,
            message: `Incorrect API key provided: ${API_KEY.slice(0, 8)}****${API_KEY.slice(-4)}.`,
          },
        ],
      },
    ])
    const masked = (await rejectionOf(client().chat(ask('x')))) as LlmError
    expect(masked.message).toContain('[redacted]')
    expect(JSON.stringify(masked.attempts)).not.toContain(`${API_KEY.slice(0, 8)}****`)
    collect(masked)
    server.setScript([])
    // A connection error (nothing listens there).
    collect(await rejectionOf(client({ baseURL: 'http://127.0.0.1:1/v1', maxRetries: 0 }).chat(ask('x'))))
    // Even a reply that contains the key is redacted in the record (the caller still gets the text).
    const ok = await client().chat(ask(`my key is ${API_KEY}`))
    expect(ok.text).toContain(API_KEY)
    texts.push(JSON.stringify(ok.attempts))
    expect(JSON.stringify(ok.attempts)).toContain('[redacted]')

    expect(texts.length).toBeGreaterThan(10)
    for (const t of texts) expect(t).not.toContain(API_KEY)
  })

  it('with redactOutput, streamed deltas and the returned text hide the key and secret header values', async () => {
    const HEADER = 'hdr-value-SECRET-42'
    const reply = `The key is ${API_KEY} and the header ${HEADER}; masked sk-test****cdef. Done.`
    server.setScript([{ replies: [{ text: reply, chunkDelayMs: 1 }] }])
    const deltas: string[] = []
    const texts: string[] = []
    const r = await client({ extraHeaders: { 'x-api-key': HEADER }, secrets: [HEADER] }).stream(ask('echo the key'), {
      redactOutput: true,
      onToken: (d, info) => {
        deltas.push(d)
        texts.push(info.text)
      },
    })
    const shown = deltas.join('')
    expect(shown).toBe('The key is [redacted] and the header [redacted]; masked [redacted]. Done.')
    expect(texts.at(-1)).toBe(shown)
    expect(r.text).toBe(shown)
    for (const t of [...deltas, ...texts, r.text]) {
      expect(t).not.toContain(API_KEY)
      expect(t).not.toContain(HEADER)
    }
    // Without it the caller gets the model's text as it came (protocols store what the model said).
    server.setScript([{ replies: [{ text: reply }] }])
    const plain: string[] = []
    const raw = await client().stream(ask('echo the key'), { onToken: (d) => void plain.push(d) })
    expect(plain.join('')).toBe(reply)
    expect(raw.text).toBe(reply)
  })
})

describe('transports', () => {
  for (const transport of ['node', 'fetch'] as const) {
    it(`${transport}: plain, streamed, cut off, hanging and cancelled calls`, async () => {
      server.setScript([
        { match: { contains: 'cut' }, replies: [{ fault: 'truncate' }, { text: 'whole again' }] },
        { match: { contains: 'hang' }, replies: [{ fault: 'hang' }] },
        { match: { contains: 'slow' }, replies: [{ text: 'slow', latencyMs: 5000 }] },
        { match: { contains: 'fail' }, replies: [{ fault: 'status', status: 422, message: 'unprocessable' }] },
      ])
      const c = client({ transport, timeoutMs: 300, maxRetries: 1 })
      expect((await c.chat(ask('hi'))).text).toBe('Echo: hi')
      expect((await c.stream(ask('hi'))).text).toBe('Echo: hi')
      const cut = await c.stream(ask('cut'))
      expect(cut.attempts.map((a) => a.errorKind ?? 'ok')).toEqual(['truncated', 'ok'])
      const hang = (await rejectionOf(c.chat(ask('hang')))) as LlmError
      expect(hang.attempts.map((a) => a.errorKind)).toEqual(['timeout', 'timeout'])
      const fail = (await rejectionOf(c.chat(ask('fail')))) as LlmError
      expect([fail.kind, fail.httpStatus, fail.message]).toEqual(['client', 422, '422 unprocessable'])
      const ac = new AbortController()
      const p = c.chat(ask('slow'), { signal: ac.signal })
      await waitFor(() => server.inFlight === 1)
      ac.abort()
      expect(((await rejectionOf(p)) as LlmError).kind).toBe('aborted')
      await waitFor(() => server.inFlight === 0, 1000, 'the server to see the close')
    })
  }
})
