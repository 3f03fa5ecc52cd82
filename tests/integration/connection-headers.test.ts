import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { sealLegacyHeaders } from '@/lib/server/llm/header-secrets'
import { execute } from '@/lib/server/operation'
import { createConnection, getConnection, listConnections, updateConnection } from '@/lib/server/services/connections'
import { getCall, listCalls, runPrompt, testConnection } from '@/lib/server/services/llm'
import { makeStudy, makeUser } from '../support/fixtures'

const HEADER = 'hdr-SECRET-0123456789-wxyz'
let server: FakeLlmServer

beforeAll(async () => {
  server = await startFakeLlmServer({ models: ['gpt-test'] })
})
afterAll(async () => {
  await server.close()
  await db.$disconnect()
})

/** An admin-made connection of a study with a secret header and a harmless one; a researcher member uses it. */
async function setup() {
  const admin = await makeUser('admin')
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const created = await execute(createConnection, admin, {
    name: 'Gateway',
    provider: 'openai-compatible',
    baseUrl: server.url,
    defaultModel: 'gpt-test',
    extraHeaders: JSON.stringify({ 'X-Api-Key': HEADER, 'X-Team': 'radiology' }),
    studyId: study.id,
  })
  if (!created.ok) throw new Error(created.error)
  return { admin, researcher, study, connectionId: created.data.id }
}

describe('extra headers are secrets like the key', () => {
  it('sealed at rest, sent as entered, masked for people, by name only in the audit log, never in the call log', async () => {
    const { admin, researcher, connectionId } = await setup()
    const row = await db.llmConnection.findUniqueOrThrow({ where: { id: connectionId } })
    expect(JSON.stringify(row)).not.toContain(HEADER)
    expect(JSON.stringify(row)).not.toContain('radiology')
    expect(row.extraHeaders).toEqual({ 'X-Api-Key': '…wxyz', 'X-Team': '…logy' })

    // The model sees the real values, and echoes the secret one back (in a reply and in an error).
    server.setScript([
      { match: { contains: 'echo' }, replies: [{ text: `Your header was ${HEADER}.` }] },
      { match: { contains: 'refuse' }, replies: [{ fault: 'status', status: 403, message: `Bad key ${HEADER}` }] },
    ])
    const ok = await execute(runPrompt, researcher, { connectionId, prompt: 'echo it' })
    expect(ok).toMatchObject({ ok: true, data: { text: 'Your header was [redacted].' } })
    const refused = await execute(runPrompt, researcher, { connectionId, prompt: 'refuse it' })
    expect(refused).toMatchObject({ ok: false, status: 400 })
    const tested = await execute(testConnection, researcher, { connectionId })
    expect(tested).toMatchObject({ ok: true, data: { ok: true } })
    const sent = server.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)
    expect(sent?.headers['x-api-key']).toBe(HEADER)
    expect(sent?.headers['x-team']).toBe('radiology')

    // A new set replaces the old one; an empty field keeps it.
    expect(
      await execute(updateConnection, admin, {
        connectionId,
        extraHeaders: JSON.stringify({ 'X-Api-Key': `${HEADER}-2` }),
      }),
    ).toMatchObject({ ok: true, data: { extraHeaders: { 'X-Api-Key': '…yz-2' } } })
    expect(await execute(updateConnection, admin, { connectionId, name: 'Gateway 2', extraHeaders: '' })).toMatchObject(
      {
        ok: true,
        data: { name: 'Gateway 2', extraHeaders: { 'X-Api-Key': '…yz-2' } },
      },
    )

    const calls = await db.llmCall.findMany({ where: { connectionId } })
    const seen = [
      ok,
      refused,
      tested,
      await execute(listConnections, researcher, {}),
      await execute(getConnection, researcher, { connectionId }),
      await execute(listCalls, researcher, { pageSize: 100 }),
      ...(await Promise.all(calls.map((c) => execute(getCall, researcher, { callId: c.id })))),
      calls,
    ]
    const text = JSON.stringify(seen)
    expect(text).not.toContain(HEADER)
    expect(text).not.toContain('radiology')
    expect(text).not.toContain('extraHeadersEnc')
    expect(JSON.stringify(await execute(getConnection, researcher, { connectionId }))).toContain('"X-Api-Key":"…yz-2"')

    const audit = await db.auditLog.findMany({ where: { resourceId: connectionId }, orderBy: { createdAt: 'asc' } })
    const auditText = JSON.stringify(audit)
    expect(auditText).not.toContain(HEADER)
    expect(auditText).not.toContain('radiology')
    expect(auditText).not.toContain('…wxyz') // not even masked: names only
    expect(audit[0]?.after).toMatchObject({ extraHeaders: ['X-Api-Key', 'X-Team'] })
  })

  it('headers stored in plain text before encryption keep working and are sealed on start', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const legacy = await db.llmConnection.create({
      data: {
        studyId: study.id,
        name: 'old',
        provider: 'openai-compatible',
        baseUrl: server.url,
        defaultModel: 'gpt-test',
        extraHeaders: { 'X-Api-Key': HEADER },
      },
    })
    // Before the start-up task: masked for people, sent as stored.
    const shown = await execute(getConnection, researcher, { connectionId: legacy.id })
    expect(shown).toMatchObject({ ok: true, data: { extraHeaders: { 'X-Api-Key': '…wxyz' } } })
    expect(JSON.stringify(shown)).not.toContain(HEADER)
    server.setScript([])
    expect(await execute(runPrompt, researcher, { connectionId: legacy.id, prompt: 'hello' })).toMatchObject({
      ok: true,
    })
    expect(server.requests.at(-1)?.headers['x-api-key']).toBe(HEADER)

    expect(await sealLegacyHeaders()).toBeGreaterThanOrEqual(1)
    const sealed = await db.llmConnection.findUniqueOrThrow({ where: { id: legacy.id } })
    expect(sealed.extraHeadersEnc).toBeTruthy()
    expect(JSON.stringify(sealed)).not.toContain(HEADER)
    expect(sealed.extraHeaders).toEqual({ 'X-Api-Key': '…wxyz' })
    expect(await sealLegacyHeaders()).toBe(0)
    expect(await execute(runPrompt, researcher, { connectionId: legacy.id, prompt: 'again' })).toMatchObject({
      ok: true,
    })
    expect(server.requests.at(-1)?.headers['x-api-key']).toBe(HEADER)
  })
})
