import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { POST } from '@/app/api/llm/stream/route'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { getAuth } from '@/lib/server/auth/auth'
import { seal } from '@/lib/server/crypto'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { runPrompt } from '@/lib/server/services/llm'
import { makeStudy, makeUser } from '../support/fixtures'

const KEY = 'sk-parley-stream-SECRET-0123456789abcdef'
const PASSWORD = 'correct horse battery'
let server: FakeLlmServer

beforeAll(async () => {
  server = await startFakeLlmServer({ models: ['gpt-test'] })
})
afterAll(async () => {
  await server.close()
  await db.$disconnect()
})

/** A signed-in researcher (a real better-auth session cookie) and a keyed connection of their study. */
async function world() {
  const researcher = await makeUser('researcher', PASSWORD)
  const study = await makeStudy(researcher)
  const connection = await db.llmConnection.create({
    data: {
      studyId: study.id,
      name: 'keyed',
      provider: 'openai-compatible',
      baseUrl: server.url,
      apiKeyEnc: seal(KEY),
      apiKeyLast4: KEY.slice(-4),
      defaultModel: 'gpt-test',
    },
  })
  const signIn = await getAuth().api.signInEmail({
    body: { email: researcher.email, password: PASSWORD },
    returnHeaders: true,
  })
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  return { researcher, connection, cookie }
}

/** The server-sent events of the playground stream, parsed. */
async function events(res: Response): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const text = await res.text()
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? ''
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>
      return { event, data }
    })
}

describe('the playground never shows the connection’s key', () => {
  it('a reply that echoes the key streams to the browser redacted, as the call log stores it', async () => {
    const { connection, cookie } = await world()
    const reply = `Sure. Your key is ${KEY} (masked: sk-parl****cdef), use it well.`
    server.setScript([{ match: { contains: 'leak' }, replies: [{ text: reply, chunkDelayMs: 2 }] }])
    const res = await POST(
      new Request('http://127.0.0.1/api/llm/stream', {
        method: 'POST',
        // What the browser's same-origin fetch sends (the cookie alone would be refused, lib/server/api/csrf.ts).
        headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
        body: JSON.stringify({ connectionId: connection.id, prompt: 'please leak the key' }),
      }),
    )
    expect(res.status).toBe(200)
    const got = await events(res)
    expect(got.at(-1)?.event).toBe('done')
    const shown = got
      .filter((e) => e.event === 'token')
      .map((e) => e.data.delta)
      .join('')
    expect(shown).toBe('Sure. Your key is [redacted] (masked: [redacted]), use it well.')
    expect(JSON.stringify(got)).not.toContain(KEY)
    // The model really sent the key back (the redaction is ours), and the call log has it redacted too.
    expect(server.requests.at(-1)?.authorization).toBe(`Bearer ${KEY}`)
    const callIds = got.at(-1)?.data.callIds as string[]
    const call = await db.llmCall.findUniqueOrThrow({ where: { id: callIds[0] } })
    expect(JSON.stringify(call.response)).toContain('Your key is [redacted]')
  })

  it('the prompt operation (no streaming) answers with the same redaction', async () => {
    const { researcher, connection } = await world()
    server.setScript([{ match: { contains: 'leak' }, replies: [{ text: `key=${KEY}` }] }])
    const r = await execute(runPrompt, researcher, { connectionId: connection.id, prompt: 'leak it' })
    expect(r).toMatchObject({ ok: true, data: { text: 'key=[redacted]' } })
  })

  it('a connection without a key redacts nothing (the SDK’s placeholder key "none" is no secret)', async () => {
    const { researcher, connection } = await world()
    await db.llmConnection.update({ where: { id: connection.id }, data: { apiKeyEnc: null, apiKeyLast4: null } })
    server.setScript([{ match: { contains: 'pick' }, replies: [{ text: 'none of the above' }] }])
    const r = await execute(runPrompt, researcher, { connectionId: connection.id, prompt: 'pick one' })
    expect(r).toMatchObject({ ok: true, data: { text: 'none of the above' } })
    const call = await db.llmCall.findUniqueOrThrow({ where: { id: r.ok ? r.data.callIds[0] : '' } })
    expect(JSON.stringify(call.response)).toContain('none of the above')
  })
})
