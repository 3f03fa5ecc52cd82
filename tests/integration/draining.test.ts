import { afterAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun, startRun } from '@/lib/server/services/runs'
import { pxpFixture as fx } from '../../protocols/pxp/fixture'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { freePort, hasBuild, type Proc, pollUntilRefused, startWeb, startWorker, waitFor } from '../support/processes'

/**
 * Draining on SIGTERM: a load balancer needs the 503 before connections are refused. The web
 * process answers /api/v1/ready 503 for PARLEY_DRAIN_SECONDS while it still takes connections (and
 * serves everything else), then stops listening; `parley worker`'s /health answers 503 until its
 * steps are handed back. Both used to stop listening at once.
 */
const fake = useFakeLlm()
const procs: Proc[] = []
afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL')
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

/** The statuses in order, runs of the same one collapsed: e.g. [200, 503, 'refused']. */
const phases = (seen: Array<{ status: number | 'refused' }>) =>
  seen.map((s) => s.status).filter((s, i, all) => i === 0 || all[i - 1] !== s)

describe.runIf(hasBuild())('the web process drains', () => {
  it('SIGTERM: ready answers 503 for the drain (health stays 200), then connections are refused', async () => {
    const port = await freePort()
    const DRAIN = 3
    const web = await startWeb(port, { PARLEY_WORKERS: '0', PARLEY_DRAIN_SECONDS: String(DRAIN) })
    procs.push(web)
    const base = `http://127.0.0.1:${port}`
    expect((await fetch(`${base}/api/v1/ready`)).status).toBe(200)
    web.child.kill('SIGTERM')
    const [ready, health] = await Promise.all([
      pollUntilRefused(`${base}/api/v1/ready`),
      pollUntilRefused(`${base}/api/v1/health`),
    ])
    const { code } = await web.stop('SIGTERM')
    console.info(`ready after SIGTERM: ${ready.map((r) => `${r.ms}ms ${r.status}`).join(', ')}; exit ${code}`)
    // A 503 first (a 200 only from a request that raced the signal), then refused; never back.
    expect(phases(ready).filter((p) => p !== 200)).toEqual([503, 'refused'])
    expect(ready.find((r) => r.status === 503)?.body).toContain('draining')
    const answered503 = ready.filter((r) => r.status === 503)
    const lastOk = (answered503.at(-1)?.ms ?? 0) - (answered503[0]?.ms ?? 0)
    expect(lastOk).toBeGreaterThanOrEqual((DRAIN - 1) * 1000)
    // Liveness is not readiness: the process is well while it drains.
    expect(phases(health).filter((p) => p !== 'refused')).toEqual([200])
  }, 120_000)
})

describe('the worker drains', () => {
  it('SIGTERM: /health answers 503 "draining" while the steps in flight finish, then closes', async () => {
    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const w = { researcher, expert: researcher, studyId: study.id, connectionId: conn.id, fake: fake() }
    // Slow model calls, so a step is in flight when the signal comes.
    fake().setScript(fx.script(1500))
    const datasetId = await fx.dataset(w, 4)
    const created = await execute(createRun, researcher, {
      studyId: study.id,
      protocol: 'pxp',
      ...fx.setup(w, datasetId),
    })
    if (!created.ok) throw new Error(created.error)
    const healthPort = await freePort()
    const worker = startWorker({ PARLEY_WORKER_HEALTH_PORT: String(healthPort), PARLEY_HEARTBEAT_SECONDS: '1' }, [
      '--concurrency',
      '2',
    ])
    procs.push(worker)
    const url = `http://127.0.0.1:${healthPort}/health`
    await waitFor(
      'the worker healthy',
      async () => (await fetch(url).catch(() => null))?.status,
      (s) => s === 200,
      60_000,
    )
    await execute(startRun, researcher, { runId: created.data.id })
    await waitFor(
      'a step in flight',
      async () =>
        Number(
          (
            await sql().query(
              `SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'active' AND data->>'runId' = $2`,
              [STEP_QUEUE, created.data.id],
            )
          ).rows[0].n,
        ),
      (n) => n > 0,
      60_000,
    )
    worker.child.kill('SIGTERM')
    const seen = await pollUntilRefused(url, { everyMs: 50 })
    const { code } = await worker.stop('SIGTERM')
    expect(code).toBe(0)
    expect(phases(seen).filter((p) => p !== 200)).toEqual([503, 'refused'])
    expect(JSON.parse(seen.find((r) => r.status === 503)?.body ?? '{}')).toMatchObject({ status: 'draining' })
    await db.run.update({ where: { id: created.data.id }, data: { status: 'paused' } })
  }, 120_000)
})
