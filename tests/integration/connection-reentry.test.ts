import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { execute } from '@/lib/server/operation'
import { createConnection, updateConnection } from '@/lib/server/services/connections'
import { testConnection } from '@/lib/server/services/llm'
import { makeStudy, makeUser } from '../support/fixtures'

// Both servers listen on loopback; the allow-list lets a researcher point a connection there, so
// what these tests see is the re-entry rule alone, not the refusal of internal addresses.
process.env.PARLEY_ALLOWED_LLM_HOSTS = '127.0.0.1'

const KEY = 'sk-admin-STUDY-KEY-0123456789abcdef'
const HEADER = 'hdr-admin-SECRET-0123456789'
let provider: FakeLlmServer
let attacker: FakeLlmServer

beforeAll(async () => {
  provider = await startFakeLlmServer({ models: ['gpt-test'] })
  attacker = await startFakeLlmServer({ models: ['gpt-test'] })
})
afterAll(async () => {
  await provider.close()
  await attacker.close()
  await db.$disconnect()
})

/** An admin-made connection of a study, with a key and a secret header; a researcher is a member. */
async function setup() {
  const admin = await makeUser('admin')
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const created = await execute(createConnection, admin, {
    name: 'Study key',
    provider: 'openai-compatible',
    baseUrl: provider.url,
    apiKey: KEY,
    defaultModel: 'gpt-test',
    extraHeaders: { 'X-Api-Key': HEADER },
    studyId: study.id,
  })
  if (!created.ok) throw new Error(created.error)
  provider.reset()
  attacker.reset()
  return { admin, researcher, connectionId: created.data.id }
}

const leaked = () =>
  attacker.requests.filter((r) => r.authorization === `Bearer ${KEY}` || r.headers['x-api-key'] === HEADER)

describe('a connection’s key never follows it to a new address', () => {
  it('a member pointing an admin’s connection at their own server must enter the key again; Test never sends the old one there', async () => {
    const { researcher, connectionId } = await setup()
    const moved = await execute(updateConnection, researcher, { connectionId, baseUrl: attacker.url })
    expect(moved).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: {
        apiKey: ['Enter the API key again to change where it is sent.'],
        extraHeaders: [expect.stringMatching(/Enter the extra headers again/)],
      },
    })
    expect((await db.llmConnection.findUniqueOrThrow({ where: { id: connectionId } })).baseUrl).toBe(provider.url)
    await execute(testConnection, researcher, { connectionId })
    expect(attacker.requests).toHaveLength(0)
    expect(provider.requests.some((r) => r.authorization === `Bearer ${KEY}`)).toBe(true)

    // With a key of their own (and the headers re-entered) the move is allowed and recorded as such.
    const own = 'sk-researcher-own-key-9876'
    const ok = await execute(updateConnection, researcher, {
      connectionId,
      baseUrl: attacker.url,
      apiKey: own,
      extraHeaders: '{}',
    })
    expect(ok).toMatchObject({ ok: true, data: { baseUrl: attacker.url, apiKeyMasked: '…9876', extraHeaders: {} } })
    await execute(testConnection, researcher, { connectionId })
    expect(attacker.requests.some((r) => r.authorization === `Bearer ${own}`)).toBe(true)
    expect(leaked()).toEqual([])
    const audit = await db.auditLog.findFirstOrThrow({
      where: { resourceId: connectionId, action: 'connection.update' },
      orderBy: { createdAt: 'desc' },
    })
    expect(audit.after).toMatchObject({ keyReentered: true, destinationChanged: ['baseUrl', 'extraHeaders'] })
    expect(JSON.stringify(audit)).not.toContain(own)
  })

  it('the rule holds for admins too, and for the API version and the extra headers', async () => {
    const { admin, researcher, connectionId } = await setup()
    const refusals = [
      await execute(updateConnection, admin, { connectionId, baseUrl: attacker.url, extraHeaders: '{}' }),
      await execute(updateConnection, researcher, { connectionId, apiVersion: '2025-01-01' }),
      await execute(updateConnection, researcher, {
        connectionId,
        extraHeaders: { 'X-Api-Key': HEADER, 'X-Forwarded-Host': 'evil.example' },
      }),
    ]
    for (const r of refusals) {
      expect(r).toMatchObject({
        ok: false,
        status: 400,
        fieldErrors: { apiKey: ['Enter the API key again to change where it is sent.'] },
      })
    }
    const row = await db.llmConnection.findUniqueOrThrow({ where: { id: connectionId } })
    expect([row.baseUrl, row.apiVersion]).toEqual([provider.url, null])
    expect(row.extraHeaders).toEqual({ 'X-Api-Key': '…6789' })
  })

  it('edits that do not move the key need no key: name, limits, the same URL and headers again', async () => {
    const { researcher, connectionId } = await setup()
    const r = await execute(updateConnection, researcher, {
      connectionId,
      name: 'Renamed',
      baseUrl: provider.url,
      extraHeaders: { 'X-Api-Key': HEADER },
      maxConcurrency: 2,
    })
    expect(r).toMatchObject({ ok: true, data: { name: 'Renamed', apiKeyMasked: '…cdef', maxConcurrency: 2 } })
    const audit = await db.auditLog.findFirstOrThrow({
      where: { resourceId: connectionId, action: 'connection.update' },
      orderBy: { createdAt: 'desc' },
    })
    expect(audit.after).toMatchObject({ keyReentered: false })
    expect(audit.after).not.toHaveProperty('destinationChanged')
    await execute(testConnection, researcher, { connectionId })
    expect(
      provider.requests.some((q) => q.authorization === `Bearer ${KEY}` && q.headers['x-api-key'] === HEADER),
    ).toBe(true)
  })
})
