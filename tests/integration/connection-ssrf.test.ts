import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type FakeLlmServer, startFakeLlmServer } from '@/lib/llm/fake-server'
import { db } from '@/lib/server/db'
import { DEMO_CONNECTION_ID, ensureDemoConnection } from '@/lib/server/llm/runtime'
import { execute } from '@/lib/server/operation'
import { createConnection, getConnection, updateConnection } from '@/lib/server/services/connections'
import { runPrompt, testConnection } from '@/lib/server/services/llm'
import { makeStudy, makeUser } from '../support/fixtures'

// The "internal service": our fake server on loopback, answering errors with a body worth hiding.
let internal: FakeLlmServer

beforeAll(async () => {
  internal = await startFakeLlmServer({ models: ['gpt-test'] })
  await ensureDemoConnection()
})
afterAll(async () => {
  await internal.close()
  await db.$disconnect()
})
afterEach(() => {
  delete process.env.PARLEY_ALLOWED_LLM_HOSTS
})

async function world() {
  const admin = await makeUser('admin')
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  return { admin, researcher, study }
}

const connectionTo = (baseUrl: string, studyId: string) => ({
  name: `to ${baseUrl}`,
  provider: 'openai-compatible',
  baseUrl,
  defaultModel: 'gpt-test',
  timeoutMs: 2000,
  studyId,
})

describe('a researcher’s connection cannot reach internal addresses', () => {
  it('refuses loopback, private, CGNAT, link-local, metadata, ULA, unspecified and multicast, in any notation', async () => {
    const { researcher, study } = await world()
    const port = internal.port
    const urls = [
      internal.url,
      `http://localhost:${port}/v1`,
      `http://2130706433:${port}/v1`,
      `http://0x7f.1:${port}/v1`,
      `http://[::1]:${port}/v1`,
      `http://[::ffff:127.0.0.1]:${port}/v1`,
      'http://10.0.0.8/v1',
      'http://172.20.1.1/v1',
      'http://192.168.1.20:11434/v1',
      'http://100.64.0.1/v1',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/',
      'http://[fe80::1]/v1',
      'http://0.0.0.0:8000/v1',
      'http://224.0.0.251/v1',
    ]
    for (const url of urls) {
      const r = await execute(createConnection, researcher, connectionTo(url, study.id))
      expect([url, r]).toMatchObject([url, { ok: false, status: 400, fieldErrors: { baseUrl: [expect.any(String)] } }])
    }
    expect(await db.llmConnection.count({ where: { studyId: study.id } })).toBe(0)
    expect(internal.requests).toHaveLength(0)
  })

  it('admins may (a local vLLM or Ollama), for a study too, and its members use it', async () => {
    const { admin, researcher, study } = await world()
    const made = await execute(createConnection, admin, connectionTo(internal.url, study.id))
    if (!made.ok) throw new Error(made.error)
    expect(await execute(testConnection, researcher, { connectionId: made.data.id })).toMatchObject({
      ok: true,
      data: { ok: true, models: ['gpt-test'] },
    })
    // A member renaming it keeps it working; a member moving it to another internal address cannot.
    expect(await execute(updateConnection, researcher, { connectionId: made.data.id, name: 'Lab vLLM' })).toMatchObject(
      {
        ok: true,
      },
    )
    expect(await execute(testConnection, researcher, { connectionId: made.data.id })).toMatchObject({
      data: { ok: true },
    })
    const moved = await execute(updateConnection, researcher, {
      connectionId: made.data.id,
      baseUrl: `http://localhost:${internal.port}/v1`,
    })
    expect(moved).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { baseUrl: [expect.stringMatching(/loopback/)] },
    })
  })

  it('the built-in demo model keeps working for everyone', async () => {
    const { researcher, study } = await world()
    expect(await execute(testConnection, researcher, { connectionId: DEMO_CONNECTION_ID })).toMatchObject({
      data: { ok: true },
    })
    const own = await execute(createConnection, researcher, {
      name: 'my demo',
      provider: 'demo',
      defaultModel: 'parley-demo',
      studyId: study.id,
    })
    if (!own.ok) throw new Error(own.error)
    expect(await execute(runPrompt, researcher, { connectionId: own.data.id, prompt: 'What is PXP?' })).toMatchObject({
      ok: true,
      data: { simulated: true },
    })
  })

  it('the allowed-hosts setting lets researchers use named hosts, addresses or ranges', async () => {
    const { researcher, study } = await world()
    process.env.PARLEY_ALLOWED_LLM_HOSTS = 'localhost'
    const byName = await execute(
      createConnection,
      researcher,
      connectionTo(`http://localhost:${internal.port}/v1`, study.id),
    )
    expect(byName).toMatchObject({ ok: true })
    expect(await execute(createConnection, researcher, connectionTo(internal.url, study.id))).toMatchObject({
      ok: false,
      status: 400,
    })
    process.env.PARLEY_ALLOWED_LLM_HOSTS = '127.0.0.0/8'
    const byRange = await execute(createConnection, researcher, connectionTo(internal.url, study.id))
    if (!byRange.ok) throw new Error(byRange.error)
    expect(await execute(testConnection, researcher, { connectionId: byRange.data.id })).toMatchObject({
      data: { ok: true },
    })
  })

  it('the address is checked again on every request (a name that now resolves inside is refused)', async () => {
    const { researcher, study } = await world()
    process.env.PARLEY_ALLOWED_LLM_HOSTS = 'localhost'
    const made = await execute(
      createConnection,
      researcher,
      connectionTo(`http://localhost:${internal.port}/v1`, study.id),
    )
    if (!made.ok) throw new Error(made.error)
    delete process.env.PARLEY_ALLOWED_LLM_HOSTS
    internal.reset()
    const tested = await execute(testConnection, researcher, { connectionId: made.data.id })
    expect(tested).toMatchObject({ ok: true, data: { ok: false } })
    if (tested.ok && !tested.data.ok) expect(tested.data.error).toMatch(/^blocked: localhost \(.*\) is a loopback/)
    expect(internal.requests).toHaveLength(0)
    // An admin saving its address vouches for it: the limit is lifted (and the audit row shows it).
    const { admin } = await world()
    expect(await execute(getConnection, admin, { connectionId: made.data.id })).toMatchObject({
      data: { restrictedHosts: true },
    })
    const saved = await execute(updateConnection, admin, {
      connectionId: made.data.id,
      baseUrl: `http://localhost:${internal.port}/v1`,
    })
    expect(saved).toMatchObject({ ok: true, data: { restrictedHosts: false } })
    expect(await execute(testConnection, researcher, { connectionId: made.data.id })).toMatchObject({
      data: { ok: true },
    })
    const audit = await db.auditLog.findFirstOrThrow({
      where: { resourceId: made.data.id, action: 'connection.update' },
      orderBy: { createdAt: 'desc' },
    })
    expect([audit.before, audit.after]).toMatchObject([{ restrictedHosts: true }, { restrictedHosts: false }])
  })

  it('Test shows a restricted connection’s status and a generic message, not the body that answered', async () => {
    const { admin, researcher, study } = await world()
    const body = 'stack trace of the internal billing service, db password=hunter2'
    internal.setScript([{ replies: [{ fault: 'status', status: 502, message: body }] }])
    process.env.PARLEY_ALLOWED_LLM_HOSTS = '127.0.0.1'
    const mine = await execute(createConnection, researcher, connectionTo(internal.url, study.id))
    if (!mine.ok) throw new Error(mine.error)
    const tested = await execute(testConnection, researcher, { connectionId: mine.data.id })
    expect(tested).toMatchObject({
      ok: true,
      data: { ok: false, error: 'server (HTTP 502): the endpoint reported a server error' },
    })
    expect(JSON.stringify(tested)).not.toContain('billing')
    const prompt = await execute(runPrompt, researcher, { connectionId: mine.data.id, prompt: 'hi' })
    expect(prompt).toMatchObject({ ok: false, status: 400 })
    expect(JSON.stringify(prompt)).not.toContain('billing')
    // An admin's own connection shows the endpoint's words (theirs to debug).
    const theirs = await execute(createConnection, admin, connectionTo(internal.url, study.id))
    if (!theirs.ok) throw new Error(theirs.error)
    const adminTest = await execute(testConnection, admin, { connectionId: theirs.data.id })
    expect(JSON.stringify(adminTest)).toContain('billing')
    internal.setScript([])
  })
})
