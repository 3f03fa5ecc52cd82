import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type Endpoint, endpoints } from '@/lib/server/api/endpoints'
import { handle } from '@/lib/server/api/handler'
import { unseal } from '@/lib/server/crypto'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { executeOrThrow } from '@/lib/server/operation'
import { createApiKey } from '@/lib/server/services/api-keys'
import { updateConnection } from '@/lib/server/services/connections'
import { makeStudy, makeUser } from '../support/fixtures'
import { ROOT } from '../support/processes'

/**
 * Labs script their LLM connections: `parley connection create|list|set-limits` and the REST
 * endpoints run the same operations as the Models page (zod, scope, audit). The API key is taken
 * from standard input or an environment variable, stored encrypted, and never printed or answered.
 */
afterAll(async () => {
  await stopBoss()
  await db.$disconnect()
})

const SECRET = 'sk-lab-0123456789-abcdef-WXYZ'

function parley(args: string[], opts: { env?: Record<string, string>; input?: string } = {}) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/parley.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, PARLEY_LOG_LEVEL: 'warn', ...opts.env },
    input: opts.input,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('parley connection', () => {
  it('create reads the key from stdin or the environment, stores it sealed and prints it masked; list and set-limits', async () => {
    const name = `lab vLLM ${Date.now()}`
    const created = parley(
      [
        'connection',
        'create',
        '--name',
        name,
        '--provider',
        'openai-compatible',
        '--base-url',
        'http://vllm.lab.internal:8000/v1/',
        '--model',
        'qwen2.5-72b',
        '--api-key-stdin',
        '--max-concurrency',
        '8',
        '--rpm',
        '600',
        '--json',
      ],
      { input: `${SECRET}\n` },
    )
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    expect(created.stdout).not.toContain(SECRET)
    const c = JSON.parse(created.stdout) as { id: string; apiKeyMasked: string; baseUrl: string }
    expect(c).toMatchObject({ apiKeyMasked: '…WXYZ', baseUrl: 'http://vllm.lab.internal:8000/v1' })
    const row = await db.llmConnection.findUniqueOrThrow({ where: { id: c.id } })
    expect(row.apiKeyEnc).not.toContain(SECRET)
    expect(unseal(row.apiKeyEnc as string)).toBe(SECRET)
    expect(row).toMatchObject({ maxConcurrency: 8, requestsPerMinute: 600, tokensPerMinute: null, studyId: null })
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: 'connection.create', resourceId: c.id } })
    expect(audit.via).toBe('cli')
    expect(JSON.stringify(audit)).not.toContain(SECRET)

    const listed = parley(['connection', 'list'])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`${c.id}  ${name}`)
    expect(listed.stdout).toContain('key …WXYZ')
    expect(listed.stdout).not.toContain(SECRET)

    const limited = parley([
      'connection',
      'set-limits',
      c.id,
      '--max-concurrency',
      '2',
      '--rpm',
      'none',
      '--tpm',
      '90000',
    ])
    expect(limited.code).toBe(0)
    expect(limited.stdout).toContain('2 at once, unlimited req/min, 90000 tokens/min')
    expect(await db.llmConnection.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({
      maxConcurrency: 2,
      requestsPerMinute: null,
      tokensPerMinute: 90_000,
    })

    // The key from an environment variable; a study's connection.
    const owner = await makeUser('researcher')
    const study = await makeStudy(owner)
    const fromEnv = parley(
      ['connection', 'create', '--name', 'study model', '--provider', 'openai', '--model', 'gpt-4o-mini'].concat([
        '--study',
        study.id,
        '--api-key-env',
        'LAB_OPENAI_KEY',
      ]),
      { env: { LAB_OPENAI_KEY: 'sk-from-env-5555' } },
    )
    expect(fromEnv.code).toBe(0)
    expect(fromEnv.stdout).toContain('key …5555')
    expect(fromEnv.stdout).toContain(`study ${study.name}`)
    expect(fromEnv.stdout).not.toContain('sk-from-env')
  }, 120_000)

  it('refuses bad input with the field, and writes nothing', async () => {
    const before = await db.llmConnection.count()
    const r = parley(['connection', 'create', '--name', 'x', '--provider', 'llama', '--model', 'm'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/provider: Provider must be one of: openai, azure, openai-compatible, demo/)
    const limits = parley(['connection', 'set-limits', 'no-such-connection', '--rpm', '-1'])
    expect(limits.code).toBe(1)
    expect(limits.stderr).toMatch(/requestsPerMinute/)
    const missing = parley(['connection', 'set-limits', 'no-such-connection', '--rpm', '10'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('Connection was not found.')
    expect(await db.llmConnection.count()).toBe(before)
  }, 120_000)
})

describe('REST /api/v1/connections', () => {
  async function call(
    ep: Endpoint,
    key: string,
    init: { path: string; params?: Record<string, string>; body?: unknown },
  ) {
    const req = new Request(`http://127.0.0.1/api/v1${init.path}`, {
      method: ep.method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    })
    const res = await handle(ep)(req, { params: Promise.resolve(init.params ?? {}) })
    return { status: res.status, text: await res.text() }
  }

  it("a researcher adds a study's connection with its limits, changes them, and never gets the key back", async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const key = (await executeOrThrow(createApiKey, researcher, { name: 'script' })).key
    const created = await call(endpoints.createConnection, key, {
      path: '/connections',
      body: {
        studyId: study.id,
        name: 'built-in',
        provider: 'demo',
        defaultModel: 'parley-demo-simulated',
        apiKey: SECRET,
        maxConcurrency: 3,
        tokensPerMinute: 20_000,
      },
    })
    expect(created.status).toBe(201)
    expect(created.text).not.toContain(SECRET)
    const c = JSON.parse(created.text) as { id: string }
    expect(JSON.parse(created.text)).toMatchObject({
      apiKeyMasked: '…WXYZ',
      maxConcurrency: 3,
      tokensPerMinute: 20_000,
    })

    const changed = await call(endpoints.updateConnection, key, {
      path: `/connections/${c.id}`,
      params: { connectionId: c.id },
      body: { requestsPerMinute: 120, tokensPerMinute: null },
    })
    expect(changed.status).toBe(200)
    expect(JSON.parse(changed.text)).toMatchObject({ maxConcurrency: 3, requestsPerMinute: 120, tokensPerMinute: null })
    for (const text of [
      (await call(endpoints.getConnection, key, { path: `/connections/${c.id}`, params: { connectionId: c.id } })).text,
      (await call(endpoints.listConnections, key, { path: '/connections' })).text,
    ]) {
      expect(text).toContain(c.id)
      expect(text).not.toContain(SECRET)
    }
    // The Models page's edit form sends an empty field for "no limit": that removes it too.
    const cleared = await executeOrThrow(updateConnection, researcher, { connectionId: c.id, requestsPerMinute: '' })
    expect(cleared.requestsPerMinute).toBeNull()
    // A viewer reads studies but manages no connection.
    const viewer = await makeUser('viewer')
    const viewerKey = (await executeOrThrow(createApiKey, viewer, { name: 'v' })).key
    expect((await call(endpoints.listConnections, viewerKey, { path: '/connections' })).status).toBe(403)
  })
})
