import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { pxp } from '@/lib/protocols/pxp'
import { replay } from '@/lib/protocols/types'
import { db } from '@/lib/server/db'
import { PXP_QUEUE, startPxpWorkers } from '@/lib/server/jobs/pxp'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { messageLog, PxpInstance } from '@/lib/server/runner/pxp'
import {
  cancelExperiment,
  pauseExperiment,
  resumeExperiment,
  retrySession,
  startExperiment,
} from '@/lib/server/services/experiment-runs'
import { createPxpExperiment } from '@/lib/server/services/experiments'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'

const fake = useFakeLlm()
// Short expiry so a killed worker's jobs come back quickly (a real deployment uses minutes).
process.env.PARLEY_JOB_EXPIRE_SECONDS = '3'
process.env.PARLEY_JOB_MAINTENANCE_SECONDS = '1'

afterAll(async () => {
  await stopBoss()
})

const SMILES = ['CCO', 'CCN', 'CCC', 'CCCl', 'CCBr', 'CCS', 'COC', 'CC=O']

/** A DRUG study whose generator is always wrong, so every session runs to its bound or a REJECT. */
async function world(
  opts: { instances?: number; latencyMs?: number; n?: number; repetitions?: number; carryOver?: boolean } = {},
) {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher)
  const conn = await fakeConnection(study.id, fake())
  const ds = await db.dataset.create({
    data: {
      studyId: study.id,
      name: 'tiny',
      kind: 'drug',
      source: 'inline',
      instances: {
        create: SMILES.slice(0, opts.instances ?? 4).map((smiles, index) => ({
          index,
          input: { smiles: `${smiles}C(=O)OC` },
          prediction: `${smiles}.OC`,
          explanation: `Ester of ${smiles}.`,
        })),
      },
    },
  })
  fake().setScript([
    { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.', latencyMs: opts.latencyMs ?? 20 }] },
    { match: { model: 'judge' }, replies: [{ text: 'No', latencyMs: opts.latencyMs ?? 20 }] },
  ])
  const created = await execute(createPxpExperiment, researcher, {
    studyId: study.id,
    name: 'queued',
    datasetId: ds.id,
    n: opts.n ?? 6,
    repetitions: opts.repetitions ?? 1,
    carryOver: String(opts.carryOver ?? false),
    generator: { connectionId: conn.id, model: 'gen' },
    checker: { connectionId: conn.id, model: 'judge' },
  })
  if (!created.ok) throw new Error(created.error)
  return { researcher, experimentId: created.data.id, sessions: created.data.sessions }
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

const status = (experimentId: string) =>
  db.experiment.findUniqueOrThrow({ where: { id: experimentId }, select: { status: true } }).then((e) => e.status)

/** Every session's log replays without a protocol error, has j = 1..N with no gap, and one C row per M row. */
async function expectIntact(experimentId: string) {
  const sessions = await db.protocolSession.findMany({
    where: { experimentId },
    include: { messages: { orderBy: { seq: 'asc' } }, contexts: { orderBy: { seq: 'asc' } } },
  })
  for (const s of sessions) {
    expect(s.status).toBe('done')
    const seqs = s.messages.map((m) => m.seq)
    expect(seqs).toEqual(seqs.map((_, i) => i + 1))
    expect(s.contexts.map((c) => c.seq)).toEqual(seqs)
    const state = replay(pxp, pxp.config.parse(s.config), PxpInstance.parse(s.instance), messageLog(s.messages))
    expect(pxp.next(state)).toMatchObject({ done: true })
  }
  return sessions
}

describe('PXP experiments on the job queue', () => {
  it('runs R = 2 with carry-over through the queue to done; every log is valid', async () => {
    const { researcher, experimentId, sessions } = await world({ repetitions: 2, carryOver: true, instances: 3 })
    const workers = await startPxpWorkers(3)
    try {
      expect(await execute(startExperiment, researcher, { experimentId })).toMatchObject({
        ok: true,
        data: { enqueued: 2 }, // the head of each repetition; the rest follow in order
      })
      await waitFor(
        'done',
        () => status(experimentId),
        (s) => s === 'done',
      )
      const all = await expectIntact(experimentId)
      expect(all).toHaveLength(sessions)
      // Carry-over order: within a repetition, session p finished before p + 1 started.
      for (const r of [1, 2]) {
        const rep = all.filter((s) => s.repetition === r).sort((a, b) => a.position - b.position)
        for (let i = 1; i < rep.length; i++) {
          const prevDone = rep[i - 1]?.doneAt?.getTime() ?? Infinity
          expect(rep[i]?.messages[0]?.createdAt.getTime()).toBeGreaterThanOrEqual(prevDone)
        }
      }
      // Starting twice is refused.
      expect(await execute(startExperiment, researcher, { experimentId })).toMatchObject({ ok: false, status: 409 })
    } finally {
      await workers.stop()
    }
  })

  it('pause holds the run within a step, resume finishes it, cancel leaves no queued job', async () => {
    const { researcher, experimentId } = await world({ instances: 4, latencyMs: 60 })
    const workers = await startPxpWorkers(2)
    try {
      await execute(startExperiment, researcher, { experimentId })
      await waitFor(
        'first messages',
        () => db.protocolMessage.count({ where: { session: { experimentId } } }),
        (n) => n >= 2,
      )
      expect(await execute(pauseExperiment, researcher, { experimentId })).toMatchObject({ ok: true })
      await new Promise((r) => setTimeout(r, 1500)) // in-flight steps finish…
      const held = await db.protocolMessage.count({ where: { session: { experimentId } } })
      await new Promise((r) => setTimeout(r, 1500))
      expect(await db.protocolMessage.count({ where: { session: { experimentId } } })).toBe(held) // …then nothing moves
      expect(await status(experimentId)).toBe('paused')
      expect(await execute(resumeExperiment, researcher, { experimentId })).toMatchObject({ ok: true })
      await waitFor(
        'done',
        () => status(experimentId),
        (s) => s === 'done',
      )
      await expectIntact(experimentId)
    } finally {
      await workers.stop()
    }

    // Cancel, with no worker running: the queued steps are dropped.
    const second = await world({ instances: 3 })
    await execute(startExperiment, second.researcher, { experimentId: second.experimentId })
    const queued = () =>
      db.$queryRaw<Array<{ n: bigint }>>`
        SELECT count(*) AS n FROM pgboss.job
        WHERE name = ${PXP_QUEUE} AND state IN ('created', 'retry') AND data->>'experimentId' = ${second.experimentId}`.then(
        (r) => Number(r[0]?.n),
      )
    expect(await queued()).toBe(3)
    expect(await execute(cancelExperiment, second.researcher, { experimentId: second.experimentId })).toMatchObject({
      ok: true,
      data: { droppedJobs: 3 },
    })
    expect(await queued()).toBe(0)
    expect(await status(second.experimentId)).toBe('cancelled')
  })

  it('an LLM failure stalls the session with the error; Retry resumes it and the run completes', async () => {
    const { researcher, experimentId } = await world({ instances: 2 })
    fake().setScript([{ match: { model: 'gen' }, replies: [{ fault: '500' }] }])
    const workers = await startPxpWorkers(2)
    try {
      await execute(startExperiment, researcher, { experimentId })
      const stalled = await waitFor(
        'stalled sessions',
        () => db.protocolSession.findMany({ where: { experimentId, status: 'stalled' } }),
        (s) => s.length === 2,
      )
      expect(stalled[0]?.stallError).toMatch(/500|server/i)
      expect(await status(experimentId)).toBe('running')
      fake().setScript([
        { match: { model: 'gen' }, replies: [{ text: 'Prediction: O\nPathway: Water.' }] },
        { match: { model: 'judge' }, replies: [{ text: 'No' }] },
      ])
      for (const s of stalled)
        expect(await execute(retrySession, researcher, { sessionId: s.id })).toMatchObject({ ok: true })
      await waitFor(
        'done',
        () => status(experimentId),
        (s) => s === 'done',
      )
      await expectIntact(experimentId)
      // A session that is no longer stalled cannot be retried again.
      expect(await execute(retrySession, researcher, { sessionId: stalled[0]?.id })).toMatchObject({ status: 409 })
    } finally {
      await workers.stop()
    }
  })

  it('SIGKILL of a worker process mid-run: a new worker finishes with every message exactly once', async () => {
    const { researcher, experimentId, sessions } = await world({ instances: 8, latencyMs: 150 })
    const worker = (): ChildProcess =>
      spawn(process.execPath, [path.resolve('bin/parley.mjs'), 'worker', '--concurrency', '4'], {
        env: { ...process.env },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    let first: ChildProcess | undefined
    let second: ChildProcess | undefined
    try {
      await execute(startExperiment, researcher, { experimentId })
      first = worker()
      const count = () => db.protocolMessage.count({ where: { session: { experimentId } } })
      const before = await waitFor('the first worker to write messages', count, (n) => n >= 6)
      first.kill('SIGKILL')
      await new Promise((r) => first?.once('exit', r))
      expect(await status(experimentId)).toBe('running')
      const open = await db.protocolSession.count({ where: { experimentId, status: { not: 'done' } } })
      expect(open).toBeGreaterThan(0) // it really died mid-run
      second = worker()
      await waitFor(
        'done after the restart',
        () => status(experimentId),
        (s) => s === 'done',
        90_000,
      )
      const all = await expectIntact(experimentId)
      expect(all).toHaveLength(sessions)
      expect(await count()).toBeGreaterThan(before)
    } finally {
      first?.kill('SIGKILL')
      second?.kill('SIGTERM')
      if (second && second.exitCode === null) await new Promise((r) => second?.once('exit', r))
    }
  }, 150_000)
})
