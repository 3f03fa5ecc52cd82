import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { seal } from '@/lib/server/crypto'
import { db } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun, startRun } from '@/lib/server/services/runs'
import { makeStudy, makeUser } from '../support/fixtures'
import { useFakeLlm } from '../support/llm'

const fake = useFakeLlm()
const KEY = 'sk-worker-SECRET-0123456789abcdef'
const dirs: string[] = []

afterAll(async () => {
  await stopBoss()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A data folder as `npm start` leaves it: only the auth-secret file matters here. */
function dataDir(secret?: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-worker-'))
  dirs.push(dir)
  if (secret) writeFileSync(path.join(dir, 'auth-secret'), `${secret}\n`, { mode: 0o600 })
  return dir
}

/** `parley worker` as the README starts it: no BETTER_AUTH_SECRET or PARLEY_ENCRYPTION_KEY in its environment. */
function worker(dir: string) {
  const { BETTER_AUTH_SECRET: _a, PARLEY_ENCRYPTION_KEY: _b, ...env } = process.env
  const child = spawn(process.execPath, [path.resolve('bin/parley.mjs'), 'worker', '--concurrency', '2'], {
    cwd: dir, // no .env there
    env: { ...env, PARLEY_DATA_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, exited, stderr: () => stderr }
}

async function waitFor<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 60_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v)) return v
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('parley worker finds the secret as npm start does', () => {
  it('reads .data/auth-secret and decrypts a connection’s key: the session completes', async () => {
    const secret = process.env.BETTER_AUTH_SECRET
    if (!secret) throw new Error('the test setup sets BETTER_AUTH_SECRET')
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    // Sealed by "the web server" under its secret, which the worker can only find in the data folder.
    const conn = await db.llmConnection.create({
      data: {
        studyId: study.id,
        name: 'keyed fake',
        provider: 'openai-compatible',
        baseUrl: fake().url,
        apiKeyEnc: seal(KEY),
        apiKeyLast4: KEY.slice(-4),
        defaultModel: 'gen',
        timeoutMs: 3000,
      },
    })
    const ds = await db.dataset.create({
      data: {
        studyId: study.id,
        name: 'one',
        kind: 'drug',
        source: 'inline',
        instances: {
          create: [{ index: 0, input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'Ester.' }],
        },
      },
    })
    fake().setScript([
      { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.' }] },
      { match: { model: 'judge' }, replies: [{ text: 'No' }] },
    ])
    const created = await execute(createRun, researcher, {
      protocol: 'pxp',
      studyId: study.id,
      name: 'keyed',
      datasetId: ds.id,
      n: 4,
      repetitions: 1,
      carryOver: 'false',
      generator: { connectionId: conn.id, model: 'gen' },
      checker: { connectionId: conn.id, model: 'judge' },
    })
    if (!created.ok) throw new Error(created.error)
    const runId = created.data.id
    expect(await execute(startRun, researcher, { runId: runId })).toMatchObject({ ok: true })
    const w = worker(dataDir(secret))
    try {
      const sessions = await waitFor(
        'the session to finish or stall',
        () => db.protocolSession.findMany({ where: { runId }, select: { status: true, stallError: true } }),
        (s) => s.length > 0 && s.every((x) => x.status === 'done' || x.status === 'stalled'),
      )
      expect(sessions).toEqual([{ status: 'done', stallError: null }])
      expect(fake().requests.some((r) => r.authorization === `Bearer ${KEY}`)).toBe(true)
    } finally {
      w.child.kill('SIGTERM')
      await w.exited
    }
  }, 90_000)

  it('without the secret anywhere it stops at once, naming what to set', async () => {
    const w = worker(dataDir())
    const code = await Promise.race([
      w.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 30_000)),
    ])
    if (code === 'still running') {
      w.child.kill('SIGTERM')
      await w.exited
    }
    expect(code).toBe(1)
    expect(w.stderr()).toMatch(/BETTER_AUTH_SECRET/)
    expect(w.stderr()).toMatch(/PARLEY_ENCRYPTION_KEY/)
  }, 60_000)
})
