import { readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { startWorkers } from '@/lib/server/engine/jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { stepSession } from '@/lib/server/engine/runner'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { queue, stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { myQueue } from '@/lib/server/services/sessions'
import { expectIntact } from '../support/intact'
import { useFakeLlm } from '../support/llm'
import {
  awaitingInSameWrite,
  cancelDropsQueue,
  create,
  killedWorker,
  pauseResume,
  personTurn,
  racingSteps,
  runStatus,
  stallThenRetry,
  world,
} from './cases'
import { toyFixture } from './fixtures/toy'
import { waitFor } from '../support/processes'
import { toyPlugin } from './toy/plugin'

/**
 * The engine's contract, tested once on a toy protocol that lives only in this folder (registered at
 * run time): pause holds, resume completes, a killed worker's re-run duplicates nothing, racing steps
 * give one message and a conflict, an LLM failure stalls then resumes, a person's turn for the wrong
 * message is a 409 and a right one is appended and audited in one transaction, the step that hands
 * the turn to a person marks the session awaiting in the same write, and cancel drops the queue.
 * Every registered protocol passes the conformance suite (conformance.test.ts) on top of it.
 */
const fake = useFakeLlm()
// Short expiry so a killed worker's jobs come back quickly (a real deployment uses minutes).
process.env.PARLEY_JOB_EXPIRE_SECONDS = '3'
process.env.PARLEY_JOB_MAINTENANCE_SECONDS = '1'

registerPlugin(toyPlugin)

afterAll(async () => {
  // Steps still queued for this file's sessions are not left to later files.
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

describe('engine contract (toy protocol)', () => {
  for (const c of [
    pauseResume,
    racingSteps,
    killedWorker,
    stallThenRetry,
    personTurn,
    awaitingInSameWrite,
    cancelDropsQueue,
  ])
    c('toy', toyFixture, fake)

  it('the work queue titles a session by its parsed instance, and one whose snapshot no longer parses as #n', async () => {
    const w = await world(fake)
    const run = await create(w, 'toy', toyFixture.humanSetup(w, await toyFixture.dataset(w, 2)))
    await db.run.update({ where: { id: run.id }, data: { status: 'running' } })
    const sessions = await db.protocolSession.findMany({
      where: { runId: run.id },
      orderBy: { position: 'asc' },
    })
    for (const s of sessions) expect((await stepSession(s.id)).kind).toBe('awaiting')
    // A snapshot the toy's instance schema refuses (written by hand, or before a rule existed).
    await db.protocolSession.update({ where: { id: sessions[1]?.id }, data: { instance: { target: 'eleven' } } })
    const queue = await execute(myQueue, w.expert, {})
    if (!queue.ok) throw new Error(queue.error)
    const titles = Object.fromEntries(queue.data.items.map((i) => [i.id, i.title]))
    expect(titles).toEqual({ [sessions[0]?.id ?? '']: 'number 10', [sessions[1]?.id ?? '']: '#2' })
  })
})

const LEGACY_MIGRATION = readFileSync(
  path.join(import.meta.dirname, '../../prisma/migrations/20261128020000_legacy_step_queue/migration.sql'),
  'utf8',
)

describe('the job queue before the engine', () => {
  it('the migration does nothing on a database whose job queue never started (no pgboss schema)', async () => {
    // A database of its own: every fresh database meets this migration before pg-boss ever ran.
    const name = `parley_fresh_${Date.now().toString(36)}`
    const url = new URL(process.env.DATABASE_URL as string)
    await sql().query(`CREATE DATABASE "${name}"`)
    url.pathname = `/${name}`
    const fresh = new pg.Client({ connectionString: url.toString() })
    try {
      await fresh.connect()
      await fresh.query(LEGACY_MIGRATION)
      const { rows } = await fresh.query(`SELECT to_regclass('pgboss.queue') AS q`)
      expect(rows[0]?.q).toBeNull()
    } finally {
      await fresh.end().catch(() => {})
      await sql().query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    }
  })

  it('a migration moves steps still queued under the old queue name onto the step queue, where they finish', async () => {
    const w = await world(fake)
    fake().setScript(toyFixture.script())
    const run = await create(w, 'toy', toyFixture.setup(w, await toyFixture.dataset(w, 1)))
    await db.run.update({ where: { id: run.id }, data: { status: 'running' } })
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: run.id } })
    // A step queued before the engine: the old name, and data with the run's protocol.
    const b = await queue(STEP_QUEUE)
    await b.createQueue('pxp-step')
    await b.send('pxp-step', { sessionId: s.id, runId: run.id, protocol: 'pxp' })
    await sql().query(LEGACY_MIGRATION)
    expect(await b.getQueue('pxp-step')).toBeNull()
    const { rows } = await sql().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND data->>'sessionId' = $2 AND state = 'created'`,
      [STEP_QUEUE, s.id],
    )
    expect(rows[0]?.n).toBe(1)
    // Run again (a second deploy): nothing happens.
    await sql().query(LEGACY_MIGRATION)
    const workers = await startWorkers(1)
    try {
      await waitFor(
        'done',
        () => runStatus(run.id),
        (x) => x === 'done',
      )
      await expectIntact(run.id)
    } finally {
      await workers.stop()
    }
  })
})
