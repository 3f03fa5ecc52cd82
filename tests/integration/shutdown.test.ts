import { afterAll, describe, expect, it } from 'vitest'
import { GET as ready } from '@/app/api/v1/ready/route'
import { db, sql } from '@/lib/server/db'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { shutdown } from '@/lib/server/processes'
import { createRun, startRun } from '@/lib/server/services/runs'
import { pxpFixture as fx } from '../../protocols/pxp/fixture'
import { makeStudy, makeUser } from '../support/fixtures'
import { expectIntact } from '../support/intact'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { hasBuild, type Proc, signInCookie, startWeb, startWorker, waitFor } from '../support/processes'

/**
 * Graceful shutdown and recovery with real processes (lib/server/processes.ts): SIGTERM hands the
 * sessions in flight back and exits within PARLEY_SHUTDOWN_SECONDS; SIGKILL's jobs come back through
 * the heartbeats within seconds although the job expiry stays at its 600 s default.
 */
const fake = useFakeLlm()
const SHUTDOWN_SECONDS = 8
const env = {
  PARLEY_HEARTBEAT_SECONDS: '1',
  PARLEY_SHUTDOWN_SECONDS: String(SHUTDOWN_SECONDS),
  PARLEY_JOB_EXPIRE_SECONDS: '600',
  // The web process drains this long first (draining.test.ts); its steps are handed back meanwhile.
  PARLEY_DRAIN_SECONDS: '1',
}
const procs: Proc[] = []

afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL')
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

async function newRun(instances: number, latencyMs: number) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await fakeConnection(study.id, fake())
  const w = { researcher, expert: researcher, studyId: study.id, connectionId: conn.id, fake: fake() }
  fake().setScript(fx.script(latencyMs))
  const datasetId = await fx.dataset(w, instances)
  const r = await execute(createRun, researcher, { studyId: study.id, protocol: 'pxp', ...fx.setup(w, datasetId) })
  if (!r.ok) throw new Error(r.error)
  return { researcher, runId: r.data.id }
}

const runStatus = (runId: string) =>
  db.run.findUniqueOrThrow({ where: { id: runId }, select: { status: true } }).then((e) => e.status)
const messageCount = (runId: string) => db.protocolMessage.count({ where: { session: { runId: runId } } })
/** Steps of this run a worker is working now. */
const activeSteps = async (runId: string) =>
  Number(
    (
      await sql().query(
        `SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'active' AND data->>'runId' = $2`,
        [STEP_QUEUE, runId],
      )
    ).rows[0].n,
  )

describe('shutdown and recovery of worker processes', () => {
  it('SIGTERM: the worker hands its sessions back and exits within the bound; another finishes the run', async () => {
    const { researcher, runId } = await newRun(6, 300)
    // Rows of processes started by earlier test files may still be there; this test looks at its own.
    const since = new Date()
    const a = startWorker(env, ['--concurrency', '4'])
    procs.push(a)
    await execute(startRun, researcher, { runId })
    await waitFor(
      'steps in flight',
      () => activeSteps(runId),
      (n) => n >= 3,
      60_000,
    )
    const { code, ms } = await a.stop('SIGTERM')
    expect(code).toBe(0)
    console.info(`worker SIGTERM → exit in ${ms} ms (bound ${SHUTDOWN_SECONDS} s)`)
    expect(ms).toBeLessThan(SHUTDOWN_SECONDS * 1000)
    // Nothing is left active: every session it had is back on the queue, and its heartbeat row is gone.
    expect(await activeSteps(runId)).toBe(0)
    const mine = await sql().query(`SELECT count(*) AS n FROM "WorkerProcess" WHERE "startedAt" >= $1`, [since])
    expect(mine.rows[0].n).toBe('0')
    expect(a.output()).toContain('shutting down')
    expect(await runStatus(runId)).toBe('running')
    const b = startWorker(env, ['--concurrency', '4'])
    procs.push(b)
    await waitFor(
      'done',
      () => runStatus(runId),
      (s) => s === 'done',
      90_000,
    )
    await expectIntact(runId)
    await b.stop('SIGTERM')
  }, 150_000)

  it('SIGKILL: the dead worker’s sessions resume on another process within seconds, not after the 600 s expiry', async () => {
    const { researcher, runId } = await newRun(4, 400)
    const a = startWorker(env, ['--concurrency', '4'])
    procs.push(a)
    await execute(startRun, researcher, { runId })
    await waitFor(
      'four steps in flight',
      () => activeSteps(runId),
      (n) => n >= 4,
      60_000,
    )
    await a.stop('SIGKILL')
    const killedAt = Date.now()
    const b = startWorker(env, ['--concurrency', '4'])
    procs.push(b)
    // Its jobs stay active (pg-boss alone would wait out the expiry) until a heartbeat hands them back.
    await waitFor(
      'the killed worker’s jobs handed back',
      () => activeSteps(runId),
      (n) => n === 0 || n < 4,
      30_000,
    )
    await waitFor(
      'done',
      () => runStatus(runId),
      (s) => s === 'done',
      60_000,
    )
    const recovered = (Date.now() - killedAt) / 1000
    console.info(`SIGKILL → the run done on the other worker ${recovered.toFixed(1)} s later (job expiry 600 s)`)
    // 5 missed heartbeats of 1 s + the retry delay + the run itself (a few seconds): far below 600 s.
    expect(recovered).toBeLessThan(40)
    expect(b.output()).toContain('handed back the jobs of silent processes')
    await expectIntact(runId)
    await b.stop('SIGTERM')
  }, 150_000)
})

/** Server-sent events of one stream, as text, as they arrive. */
function sse(res: Response) {
  let text = ''
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return Date.now()
      text += decoder.decode(value)
    }
  })()
  return { text: () => text, ended, cancel: () => reader.cancel() }
}

describe.runIf(hasBuild())('the web process (next start)', () => {
  it('a watching page gets resync, then the next event, after its server’s LISTEN backend is terminated', async () => {
    const { researcher, runId } = await newRun(1, 10)
    const web = await startWeb(3404, { ...env, PARLEY_WORKERS: '0' })
    procs.push(web)
    const base = 'http://127.0.0.1:3404'
    const cookie = await signInCookie(base, researcher.email)
    const res = await fetch(`${base}/api/live?topic=run:${runId}`, { headers: { cookie } })
    expect(res.headers.get('x-accel-buffering')).toBe('no')
    const s = sse(res)
    await waitFor(
      'ready',
      async () => s.text(),
      (t) => t.includes('event: ready'),
      10_000,
    )
    const { rows } = await sql().query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = 'parley-live' AND datname = current_database()`,
    )
    expect(rows).toHaveLength(1)
    await sql().query('SELECT pg_terminate_backend($1)', [rows[0]?.pid])
    await waitFor(
      'resync',
      async () => s.text(),
      (t) => t.includes('"type":"resync"'),
      20_000,
    )
    expect(s.text()).toContain('"type":"down"')
    await sql().query(`SELECT pg_notify('parley_live', $1)`, [
      JSON.stringify({ topic: `run:${runId}`, type: 'progress' }),
    ])
    await waitFor(
      'the next event',
      async () => s.text(),
      (t) => t.includes('"type":"progress"'),
      10_000,
    )
    await s.cancel()
    await web.stop('SIGTERM')
  }, 120_000)

  it('SIGTERM during a run: live streams close, it exits within the bound, a worker finishes the run', async () => {
    const { researcher, runId } = await newRun(6, 300)
    const web = await startWeb(3405, { ...env, PARLEY_WORKERS: '4' })
    procs.push(web)
    const base = 'http://127.0.0.1:3405'
    const cookie = await signInCookie(base, researcher.email)
    const stream = await fetch(`${base}/api/live?topic=run:${runId}`, { headers: { cookie } })
    expect(stream.status).toBe(200)
    const streamEnded = sse(stream).ended
    await execute(startRun, researcher, { runId })
    await waitFor(
      'steps in flight in the web process',
      () => activeSteps(runId),
      (n) => n >= 3,
      60_000,
    )
    const before = await messageCount(runId)
    const t0 = Date.now()
    const { ms } = await web.stop('SIGTERM')
    console.info(`web SIGTERM → exit in ${ms} ms (bound ${SHUTDOWN_SECONDS} s)`)
    expect(ms).toBeLessThan(SHUTDOWN_SECONDS * 1000)
    expect(await streamEnded).toBeLessThanOrEqual(t0 + ms)
    expect(await activeSteps(runId)).toBe(0)
    const b = startWorker(env, ['--concurrency', '4'])
    procs.push(b)
    await waitFor(
      'done',
      () => runStatus(runId),
      (s) => s === 'done',
      90_000,
    )
    expect(await messageCount(runId)).toBeGreaterThan(before)
    await expectIntact(runId)
    await b.stop('SIGTERM')
  }, 180_000)
})

describe('readiness during shutdown', () => {
  // Last in this file: it shuts this test process's own state down.
  it('/api/v1/ready answers 503 once shutdown began', async () => {
    expect((await ready()).status).toBe(200)
    await shutdown(1000)
    const res = await ready()
    expect(res.status).toBe(503)
    expect(await res.json()).toMatchObject({ status: 'draining' })
  })
})
