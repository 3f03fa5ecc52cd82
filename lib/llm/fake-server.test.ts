import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type FakeLlmServer, rulesFromJson, startFakeLlmServer } from './fake-server'
import { approxTokens } from './text'

let server: FakeLlmServer
let sdk: OpenAI

beforeAll(async () => {
  server = await startFakeLlmServer()
  sdk = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 })
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  server.setScript([])
  server.reset()
})

const msg = (content: string) => [{ role: 'user' as const, content }]

describe('fake OpenAI-compatible server (through the real SDK)', () => {
  it('lists models', async () => {
    const page = await sdk.models.list()
    expect(page.data.map((m) => m.id)).toEqual(['fake-model', 'parley-demo-simulated'])
  })

  it('echoes deterministically with usage by default', async () => {
    const r = await sdk.chat.completions.create({ model: 'm1', messages: msg('ping') })
    expect(r.choices[0]?.message.content).toBe('Echo: ping')
    expect(r.model).toBe('m1')
    expect(r.usage).toEqual({ prompt_tokens: 1, completion_tokens: approxTokens('Echo: ping'), total_tokens: 4 })
    expect(server.requests[0]).toMatchObject({ model: 'm1', path: '/v1/chat/completions', reply: 'echo', status: 200 })
  })

  it('matches rules by model and content, plays replies in order and repeats the last', async () => {
    server.setScript([
      { match: { model: 'a', contains: /hello/i }, replies: [{ text: 'first' }, { json: { n: 2 } }] },
      { match: { model: /^b/ }, replies: [{ text: 'from b' }] },
    ])
    const say = async (model: string, content: string) =>
      (await sdk.chat.completions.create({ model, messages: msg(content) })).choices[0]?.message.content
    expect(await say('a', 'HELLO')).toBe('first')
    expect(await say('a', 'hello again')).toBe('{"n":2}')
    expect(await say('a', 'hello 3')).toBe('{"n":2}')
    expect(await say('a', 'bye')).toBe('Echo: bye') // model matches, content does not
    expect(await say('bx', 'bye')).toBe('from b')
    expect(server.requests.map((r) => r.rule)).toEqual([0, 0, 0, undefined, 1])
  })

  it('streams SSE chunks with a final usage chunk', async () => {
    server.setScript([{ replies: [{ text: 'alpha beta gamma' }] }])
    const stream = await sdk.chat.completions.create({
      model: 'm',
      messages: msg('x'),
      stream: true,
      stream_options: { include_usage: true },
    })
    const chunks = []
    for await (const c of stream) chunks.push(c)
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')
    expect(text).toBe('alpha beta gamma')
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(3)
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop')
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(approxTokens('alpha beta gamma'))
  })

  it('injects 429 with Retry-After and 500', async () => {
    server.setScript([{ replies: [{ fault: '429', retryAfter: 7 }, { fault: '500' }] }])
    const e1 = await sdk.chat.completions.create({ model: 'm', messages: msg('x') }).catch((e: unknown) => e)
    expect(e1).toBeInstanceOf(OpenAI.RateLimitError)
    expect((e1 as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('7')
    const e2 = await sdk.chat.completions.create({ model: 'm', messages: msg('x') }).catch((e: unknown) => e)
    expect(e2).toBeInstanceOf(OpenAI.InternalServerError)
  })

  it('counts requests in flight', async () => {
    server.setScript([{ replies: [{ text: 'ok', latencyMs: 100 }] }])
    await Promise.all(Array.from({ length: 5 }, () => sdk.chat.completions.create({ model: 'm', messages: msg('x') })))
    expect(server.maxInFlight).toBe(5)
    expect(server.inFlight).toBe(0)
    expect(server.requests.every((r) => r.durationMs! >= 95)).toBe(true)
  })

  it('accepts a JSON script over the admin API', async () => {
    const base = server.url.replace(/\/v1$/, '')
    const res = await fetch(`${base}/_fake/script`, {
      method: 'POST',
      body: JSON.stringify([{ match: { contains: { regex: 'sec+ret', flags: 'i' } }, replies: [{ text: 'found' }] }]),
    })
    expect(res.status).toBe(200)
    const r = await sdk.chat.completions.create({ model: 'm', messages: msg('a SECCRET') })
    expect(r.choices[0]?.message.content).toBe('found')
    const recorded = (await (await fetch(`${base}/_fake/requests`)).json()) as { reply: string }[]
    expect(recorded.map((x) => x.reply)).toEqual(['text'])
    const bad = await fetch(`${base}/_fake/script`, {
      method: 'POST',
      body: JSON.stringify([{ replies: [{ fault: 'nope' }] }]),
    })
    expect(bad.status).toBe(400)
  })
})

describe('rulesFromJson', () => {
  it('turns regex objects into RegExps and rejects malformed rules', () => {
    const rules = rulesFromJson([
      { match: { model: { regex: '^gpt' }, contains: 'x' }, replies: [{ fault: '429', retryAfter: 1 }] },
    ])
    expect(rules[0]?.match?.model).toBeInstanceOf(RegExp)
    expect(rules[0]?.match?.contains).toBe('x')
    expect(() => rulesFromJson([{ replies: [] }])).toThrow()
    expect(() => rulesFromJson({})).toThrow()
  })
})
