import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { z } from 'zod'
import { clientFor, recordedChat } from '@/lib/server/llm/runtime'
import { createConnection, getConnection, listConnections } from '@/lib/server/services/connections'
import { getCall, listCalls, runPrompt, testConnection } from '@/lib/server/services/llm'
import { makeStudy, makeUser } from '../support/fixtures'

// These connections are a researcher's and the fake server listens on loopback, which researchers'
// connections may reach only through the allowed-hosts setting (tests/integration/connection-ssrf.test.ts).
process.env.PARLEY_ALLOWED_LLM_HOSTS = '127.0.0.1'

const KEY = 'sk-parley-test-SECRET-0123456789abcdef'
let server: FakeLlmServer

beforeAll(async () => {
  server = await startFakeLlmServer({ models: ['fake-model', 'gpt-test'] })
})
afterAll(async () => {
  await server.close()
  await db.$disconnect()
})

async function setup() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const created = await execute(createConnection, researcher, {
    name: 'Fake server',
    provider: 'openai-compatible',
    baseUrl: server.url,
    apiKey: KEY,
    defaultModel: 'gpt-test',
    maxConcurrency: 4,
    timeoutMs: 2000,
    studyId: study.id,
  })
  if (!created.ok) throw new Error(created.error)
  return { researcher, study, connectionId: created.data.id }
}

describe('LLM calls through connections, recorded in the call log', () => {
  it('a prompt is answered through the real SDK and logged with tokens, latency and cost', async () => {
    const { researcher, study, connectionId } = await setup()
    await db.modelPrice.upsert({
      where: { model: 'gpt-te*' },
      create: { model: 'gpt-te*', inputPerMTok: 2, outputPerMTok: 8 },
      update: {},
    })
    server.setScript([{ match: { contains: 'capital of France' }, replies: [{ text: 'Paris.' }] }])
    const r = await execute(runPrompt, researcher, { connectionId, prompt: 'What is the capital of France?' })
    expect(r).toMatchObject({ ok: true, data: { text: 'Paris.', cached: false, simulated: false } })
    if (!r.ok) return
    const [call] = await db.llmCall.findMany({ where: { id: { in: r.data.callIds } } })
    expect(call).toMatchObject({
      status: 'ok',
      attempt: 1,
      studyId: study.id,
      modelRequested: 'gpt-test',
      purpose: 'playground',
    })
    expect(call?.tokensIn).toBeGreaterThan(0)
    expect(call?.tokensOut).toBeGreaterThan(0)
    expect(call?.costUsd).toBeCloseTo(((call?.tokensIn ?? 0) * 2 + (call?.tokensOut ?? 0) * 8) / 1e6, 12)
    expect(call?.latencyMs).toBeGreaterThanOrEqual(0)
    expect(call?.promptHash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('429 then success: both attempts are rows; 500 ×N: every attempt is a row with the error', async () => {
    const { researcher, connectionId } = await setup()
    server.setScript([
      { match: { contains: 'flaky' }, replies: [{ fault: '429', retryAfter: 0 }, { text: 'fine now' }] },
    ])
    const ok = await execute(runPrompt, researcher, { connectionId, prompt: 'flaky request' })
    expect(ok).toMatchObject({ ok: true, data: { text: 'fine now' } })
    if (ok.ok) {
      const rows = await db.llmCall.findMany({ where: { id: { in: ok.data.callIds } }, orderBy: { attempt: 'asc' } })
      expect(rows.map((c) => [c.attempt, c.status])).toEqual([
        [1, 'error'],
        [2, 'ok'],
      ])
      expect(rows[0]?.httpStatus).toBe(429)
    }
    server.setScript([{ match: { contains: 'broken' }, replies: [{ fault: '500' }] }])
    const before = await db.llmCall.count({ where: { connectionId } })
    const bad = await execute(runPrompt, researcher, { connectionId, prompt: 'broken endpoint' })
    expect(bad).toMatchObject({ ok: false, status: 400 })
    if (!bad.ok) expect(bad.error).toMatch(/HTTP 500/)
    const failed = await db.llmCall.findMany({
      where: { connectionId, status: 'error' },
      orderBy: { createdAt: 'asc' },
    })
    expect((await db.llmCall.count({ where: { connectionId } })) - before).toBe(4) // 1 try + 3 retries
    expect(failed.slice(-4).every((c) => c.httpStatus === 500 && c.error)).toBe(true)
  })

  it('replay serves an identical request from the log without calling the model', async () => {
    const { researcher, connectionId } = await setup()
    server.setScript([
      { match: { contains: 'replay me' }, replies: [{ text: 'first answer' }, { text: 'second answer' }] },
    ])
    const first = await execute(runPrompt, researcher, { connectionId, prompt: 'replay me', temperature: 0 })
    const seen = server.requests.length
    const second = await execute(runPrompt, researcher, {
      connectionId,
      prompt: 'replay me',
      temperature: 0,
      replay: true,
    })
    expect(first).toMatchObject({ ok: true, data: { text: 'first answer', cached: false } })
    expect(second).toMatchObject({ ok: true, data: { text: 'first answer', cached: true } })
    expect(server.requests.length).toBe(seen)
    // Without replay the model is asked again.
    const third = await execute(runPrompt, researcher, { connectionId, prompt: 'replay me', temperature: 0 })
    expect(third).toMatchObject({ ok: true, data: { text: 'second answer', cached: false } })
  })

  it('test connection lists models and records a one-token call; a wrong URL gives the real error', async () => {
    const { researcher, study, connectionId } = await setup()
    const ok = await execute(testConnection, researcher, { connectionId })
    expect(ok).toMatchObject({ ok: true, data: { ok: true, models: ['fake-model', 'gpt-test'] } })
    const wrong = await execute(createConnection, researcher, {
      name: 'Nothing there',
      provider: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      defaultModel: 'x',
      timeoutMs: 1000,
      studyId: study.id,
    })
    if (!wrong.ok) throw new Error(wrong.error)
    const failed = await execute(testConnection, researcher, { connectionId: wrong.data.id })
    expect(failed).toMatchObject({ ok: true, data: { ok: false } })
    if (failed.ok && !failed.data.ok) expect(failed.data.error).toMatch(/connection|ECONNREFUSED/i)
  })

  it('the API key is sealed at rest and never appears in pages’ data, the call log or the audit log', async () => {
    const { researcher, connectionId } = await setup()
    server.setScript([{ match: { contains: 'leak' }, replies: [{ fault: '401' }] }])
    // Capture everything written to the process's stdout/stderr while the calls run (log lines).
    const written: string[] = []
    const out = process.stdout.write.bind(process.stdout)
    const err = process.stderr.write.bind(process.stderr)
    const capture = (chunk: unknown) => {
      written.push(String(chunk))
      return true
    }
    process.stdout.write = capture as typeof process.stdout.write
    process.stderr.write = capture as typeof process.stderr.write
    let leaked: Awaited<ReturnType<typeof execute>>
    try {
      leaked = await execute(runPrompt, researcher, { connectionId, prompt: 'try to leak the key' })
      await execute(runPrompt, researcher, { connectionId, prompt: 'a normal call' })
      await execute(testConnection, researcher, { connectionId })
    } finally {
      process.stdout.write = out
      process.stderr.write = err
    }
    // The provider echoed the key in its 401 body; the error we report carries no key.
    expect(leaked).toMatchObject({ ok: false, status: 400 })
    expect(JSON.stringify(leaked)).not.toContain(KEY)
    expect(written.join('')).not.toContain(KEY)
    const row = await db.llmConnection.findUniqueOrThrow({ where: { id: connectionId } })
    expect(row.apiKeyEnc).not.toContain(KEY)
    expect(row.apiKeyLast4).toBe(KEY.slice(-4))
    const exposed = [
      await execute(listConnections, researcher, {}),
      await execute(getConnection, researcher, { connectionId }),
      await execute(listCalls, researcher, { pageSize: 100 }),
      ...(await Promise.all(
        (
          await db.llmCall.findMany({ where: { connectionId } })
        ).map((c) => execute(getCall, researcher, { callId: c.id })),
      )),
      await db.llmCall.findMany({ where: { connectionId } }),
      await db.auditLog.findMany({ where: { resourceId: connectionId } }),
    ]
    const text = JSON.stringify(exposed)
    expect(text).not.toContain(KEY)
    expect(text).not.toContain('apiKeyEnc')
    expect(text).toContain('…cdef') // the masked form is what people see
    // The fake server did receive the key: the redaction is ours, not an absent key.
    expect(server.requests.map((r) => r.authorization)).toContain(`Bearer ${KEY}`)
  })

  it('people see only the calls of their studies or their own', async () => {
    const { researcher, connectionId } = await setup()
    server.setScript([])
    const r = await execute(runPrompt, researcher, { connectionId, prompt: 'private call' })
    if (!r.ok) throw new Error(r.error)
    const stranger = await makeUser('researcher')
    expect(await execute(getCall, stranger, { callId: r.data.callIds[0] })).toMatchObject({ ok: false, status: 404 })
    const list = await execute(listCalls, stranger, { pageSize: 100 })
    expect(list.ok && list.data.items.map((c) => c.id)).not.toContain(r.data.callIds[0])
    const admin = await makeUser('admin')
    expect(await execute(getCall, admin, { callId: r.data.callIds[0] })).toMatchObject({ ok: true })
  })

  it('image parts reach vision models and JSON-schema output comes back typed', async () => {
    const { connectionId } = await setup()
    const row = await db.llmConnection.findUniqueOrThrow({ where: { id: connectionId } })
    const pixel =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
    server.setScript([
      { match: { contains: 'Describe the X-ray' }, replies: [{ text: 'Cardiomegaly is suggested.' }] },
      {
        match: { contains: 'Label it' },
        replies: [{ text: '{"label": "maybe"}' }, { json: { label: 'Atelectasis', confidence: 0.8 } }],
      },
    ])
    const before = server.requests.length
    const seen = await recordedChat(
      row,
      {
        model: 'gpt-test',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe the X-ray.' },
              { type: 'image_url', image_url: { url: pixel } },
            ],
          },
        ],
      },
      { purpose: 'test' },
    )
    expect(seen.text).toBe('Cardiomegaly is suggested.')
    const body = server.requests[before]?.body as { messages: Array<{ content: Array<{ type: string }> }> }
    expect(body.messages[0]?.content.map((p) => p.type)).toEqual(['text', 'image_url'])
    const logged = await db.llmCall.findUniqueOrThrow({ where: { id: seen.callIds[0] } })
    expect(JSON.stringify(logged.request)).toContain('image_url')

    const Label = z.object({ label: z.enum(['Atelectasis', 'Cardiomegaly', 'Effusion']), confidence: z.number() })
    const schema = {
      type: 'json_schema' as const,
      json_schema: { name: 'label', schema: z.toJSONSchema(Label) as Record<string, unknown> },
    }
    const out = await (await clientFor(row)).structured(
      { model: 'gpt-test', messages: [{ role: 'user', content: 'Label it.' }], response_format: schema },
      Label,
      { maxReasks: 2 },
    )
    expect(out.value).toEqual({ label: 'Atelectasis', confidence: 0.8 })
    expect(out.attempts).toHaveLength(2)
    expect(out.attempts[0]?.validationError).toBeTruthy()
    const last = server.requests.at(-1)?.body as { response_format?: { type: string } }
    expect(last.response_format?.type).toBe('json_schema')
  })
})
