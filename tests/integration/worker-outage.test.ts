import { afterAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun, startRun } from '@/lib/server/services/runs'
import { pxpFixture as fx } from '../../protocols/pxp/fixture'
import { makeStudy, makeUser } from '../support/fixtures'
import { expectIntact } from '../support/intact'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { type Proc, startWorker, waitFor } from '../support/processes'
import { type TcpProxy, tcpProxy } from '../support/tcp-proxy'

/**
 * A database blip must not end a `parley worker`: with PostgreSQL refusing connections for a few
 * seconds in the middle of a run (a TCP proxy between the worker and PostgreSQL, closed and opened
 * again), the worker keeps running, reconnects, and the run finishes with every message once.
 */
const fake = useFakeLlm()
const procs: Proc[] = []
let proxy: TcpProxy | undefined

afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL')
  await proxy?.close()
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

const runStatus = (runId: string) =>
  db.run.findUniqueOrThrow({ where: { id: runId }, select: { status: true } }).then((e) => e.status)
const messageCount = (runId: string) => db.protocolMessage.count({ where: { session: { runId: runId } } })

describe('a worker rides out a database outage', () => {
  it('PostgreSQL refuses connections for 5 s mid-run: the worker lives on and the run finishes', async () => {
    const direct = new URL(process.env.DATABASE_URL as string)
    proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
    const viaProxy = new URL(direct)
    viaProxy.hostname = '127.0.0.1'
    viaProxy.port = String(proxy.port)

    const researcher = await makeUser('researcher')
    const study = await makeStudy(researcher)
    const conn = await fakeConnection(study.id, fake())
    const w = { researcher, expert: researcher, studyId: study.id, connectionId: conn.id, fake: fake() }
    fake().setScript(fx.script(150))
    const datasetId = await fx.dataset(w, 6)
    const created = await execute(createRun, researcher, {
      studyId: study.id,
      protocol: 'pxp',
      ...fx.setup(w, datasetId),
    })
    if (!created.ok) throw new Error(created.error)
    const runId = created.data.id

    const worker = startWorker(
      { DATABASE_URL: viaProxy.toString(), PARLEY_HEARTBEAT_SECONDS: '1', PARLEY_JOB_MAINTENANCE_SECONDS: '1' },
      ['--concurrency', '4'],
    )
    procs.push(worker)
    await execute(startRun, researcher, { runId })
    await waitFor(
      'the run under way',
      () => messageCount(runId),
      (n) => n >= 4,
      60_000,
    )
    const before = await messageCount(runId)
    await proxy.down()
    await new Promise((r) => setTimeout(r, 5000))
    expect(worker.child.exitCode, worker.output().slice(-3000)).toBeNull()
    await proxy.up()
    const back = Date.now()
    await waitFor(
      'done',
      () => runStatus(runId),
      (s) => s === 'done' || worker.child.exitCode !== null,
      120_000,
    )
    expect(worker.child.exitCode, worker.output().slice(-3000)).toBeNull()
    expect(await runStatus(runId)).toBe('done')
    console.info(`run done ${((Date.now() - back) / 1000).toFixed(1)} s after the database came back`)
    // The queue noticed the outage once, backed off, and said when the database was back.
    const out = worker.output()
    console.info(
      out
        .split('\n')
        .filter((l) => /reachable|handed back|interrupted|step failed|retrying/.test(l))
        .map((l) => {
          try {
            const j = JSON.parse(l)
            return `${new Date(j.time).toISOString().slice(11, 23)} ${j.msg}`
          } catch {
            return l.slice(0, 120)
          }
        })
        .join('\n'),
    )
    expect(out.match(/the database is unreachable; retrying with back-off/g)).toHaveLength(1)
    expect(out).toContain('the database is reachable again')
    expect(await messageCount(runId)).toBeGreaterThan(before)
    // Every session intact: messages 1..N once each, one context per message, replayed to Done.
    await expectIntact(runId)
    const { code } = await worker.stop('SIGTERM')
    expect(code).toBe(0)
  }, 240_000)
})
