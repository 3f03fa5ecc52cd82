import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { expect, it } from 'vitest'
import type { FakeLlmServer } from '@/lib/llm/fake-server'
import { db, sql } from '@/lib/server/db'
import { handleStep, startWorkers } from '@/lib/server/engine/jobs'
import { runHeadless } from '@/lib/server/engine/headless'
import { pluginFor } from '@/lib/server/engine/plugins'
import { loadSession, prepare, stepSession } from '@/lib/server/engine/runner'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { DEMO_CONNECTION_ID, ensureDemoConnection } from '@/lib/server/llm/runtime'
import { execute } from '@/lib/server/operation'
import { exportRun, exportRunFile } from '@/lib/server/services/run-export'
import {
  cancelRun,
  createRun,
  getRun,
  pauseRun,
  resumeRun,
  retrySession,
  retryStalled,
  startRun,
} from '@/lib/server/services/runs'
import { getSession, myQueue, submitTurn } from '@/lib/server/services/sessions'
import { makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection } from '../support/llm'
import type { ContractFixture, World } from './fixtures/types'
import { expectIntact } from '../support/intact'
import { waitFor } from '../support/processes'

/**
 * The cases of the engine's contract and of each protocol's conformance, written once: the engine
 * cases (tests/engine/contract.test.ts) run them on the toy protocols of this folder, the conformance
 * suite (tests/engine/conformance.test.ts) runs the protocol's part of them on every registered one.
 */

export async function world(fake: () => FakeLlmServer): Promise<World> {
  const researcher = await makeUser('researcher')
  const expert = await makeUser('expert')
  const study = await makeStudy(researcher, [expert])
  const conn = await fakeConnection(study.id, fake())
  return { researcher, expert, studyId: study.id, connectionId: conn.id, fake: fake() }
}

export const runStatus = (runId: string) =>
  db.run.findUniqueOrThrow({ where: { id: runId }, select: { status: true } }).then((e) => e.status)
const messageCount = (runId: string) => db.protocolMessage.count({ where: { session: { runId: runId } } })

export async function create(
  w: World,
  protocol: string,
  input: Record<string, unknown>,
  actor = w.researcher,
): Promise<{ id: string; sessions: number }> {
  const r = await execute(createRun, actor, { studyId: w.studyId, protocol, ...input })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  return r.data
}

async function demoRun(id: string, fx: ContractFixture, fake: () => FakeLlmServer, n: number) {
  const w = await world(fake)
  await ensureDemoConnection()
  const demoSetup = fx.demoSetup
  if (!demoSetup) throw new Error(`${id} has no demo set-up in its contract fixture`)
  const run = await create(w, id, demoSetup(w, await fx.dataset(w, n), DEMO_CONNECTION_ID))
  const p = await runHeadless(run.id, { concurrency: 2 })
  expect(p).toMatchObject({ total: n, done: n, stalled: 0 })
  return { w, run }
}

export function demoPlaysToDone(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('the offline demo model plays a run to done; every log replays intact, every model call recorded', async () => {
    const { run } = await demoRun(id, fx, fake, 2)
    await expectIntact(run.id)
    const calls = await db.llmCall.findMany({
      where: {
        sessionRef: {
          in: (await db.protocolSession.findMany({ where: { runId: run.id } })).map((s) => s.id),
        },
      },
    })
    expect(calls.length).toBeGreaterThan(0)
    expect(calls.every((c) => c.status === 'ok')).toBe(true)
  })
}

export function exportsStream(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it("every table of a finished run streams as JSON Lines and CSV, the protocol's own and files included", async () => {
    const { w, run } = await demoRun(id, fx, fake, 2)
    const plugin = await pluginFor(id)
    const messages = await db.protocolMessage.count({ where: { session: { runId: run.id } } })
    for (const table of ['d', 'm', 'c', ...Object.keys((await plugin.exports?.())?.tables ?? {})]) {
      const read = async (format: 'jsonl' | 'csv') => {
        const r = await execute(exportRun, w.researcher, { runId: run.id, table, format })
        if (!r.ok) throw new Error(`${table} ${format}: ${r.error}`)
        const lines: string[] = []
        for await (const line of r.data.lines()) lines.push(String(line))
        return lines
      }
      const jsonl = await read('jsonl')
      const mayBeEmpty = fx.emptyTables?.includes(table) ?? false
      if (!mayBeEmpty) expect(jsonl.length, `${table}: rows of a finished run`).toBeGreaterThan(0)
      for (const l of jsonl) expect(typeof JSON.parse(l), `${table}: one JSON object per line`).toBe('object')
      if (table === 'd') expect(jsonl).toHaveLength(2)
      if (table === 'm') {
        expect(jsonl).toHaveLength(messages)
        // The projections come out under the protocol's own names, with the stored values.
        const names = { label: 'label', value: 'value', detail: 'detail', ...plugin.projectionNames }
        const stored = await db.protocolMessage.findMany({ where: { session: { runId: run.id } } })
        const byKey = new Map(stored.map((m) => [`${m.sessionId}/${m.seq}`, m]))
        for (const l of jsonl) {
          const row = JSON.parse(l) as Record<string, unknown>
          const m = byKey.get(`${row.session}/${row.j}`)
          expect([row[names.label], row[names.value], row[names.detail]]).toEqual([m?.label, m?.value, m?.detail])
        }
        expect(
          stored.some((m) => m.label !== null),
          'a projection was written',
        ).toBe(true)
      }
      // The same rows under a header (a protocol table without rows has no header to take from them).
      expect(await read('csv'), table).toHaveLength(jsonl.length === 0 && mayBeEmpty ? 0 : jsonl.length + 1)
    }
    for (const file of Object.keys((await plugin.exports?.())?.files ?? {})) {
      const r = await execute(exportRunFile, w.researcher, { runId: run.id, file })
      if (!r.ok) throw new Error(`${file}: ${r.error}`)
      expect(r.data.bytes.byteLength, file).toBeGreaterThan(0)
    }
  })
}

export function pauseResume(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('pause holds within a step, resume completes every session; every log replays to Done', async () => {
    const w = await world(fake)
    fake().setScript(fx.script(60))
    const run = await create(w, id, fx.setup(w, await fx.dataset(w, 3)))
    const workers = await startWorkers(2)
    try {
      expect(await execute(startRun, w.researcher, { runId: run.id })).toMatchObject({
        ok: true,
        data: { enqueued: 3 },
      })
      await waitFor(
        'first messages',
        () => messageCount(run.id),
        (n) => n >= 2,
      )
      expect(await execute(pauseRun, w.researcher, { runId: run.id })).toMatchObject({ ok: true })
      await new Promise((r) => setTimeout(r, 1200)) // the steps in flight finish …
      const held = await messageCount(run.id)
      await new Promise((r) => setTimeout(r, 1200))
      expect(await messageCount(run.id)).toBe(held) // … then nothing moves
      expect(await runStatus(run.id)).toBe('paused')
      // No session is being stepped while its run is paused.
      await waitFor(
        'the workers to let go',
        async () => {
          const r = await execute(getRun, w.researcher, { runId: run.id })
          return r.ok ? r.data.counts.running : -1
        },
        (n) => n === 0,
      )
      expect(await execute(resumeRun, w.researcher, { runId: run.id })).toMatchObject({ ok: true })
      await waitFor(
        'done',
        () => runStatus(run.id),
        (s) => s === 'done',
      )
      await expectIntact(run.id)
      expect(await execute(startRun, w.researcher, { runId: run.id })).toMatchObject({ ok: false, status: 409 })
    } finally {
      await workers.stop()
    }
  })
}

export function racingSteps(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('two steps racing for one message append it once; the loser gets a conflict', async () => {
    const w = await world(fake)
    fake().setScript(fx.script(40))
    const run = await create(w, id, fx.setup(w, await fx.dataset(w, 1)))
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: run.id } })
    // Both steps start from the same state (as two workers that loaded it at once would).
    const loaded = await prepare(await loadSession(s.id))
    const [a, b] = await Promise.all([stepSession(s.id, { loaded }), stepSession(s.id, { loaded })])
    expect([a.kind, b.kind].sort()).toEqual(['appended', 'conflict'])
    expect(await db.protocolMessage.count({ where: { sessionId: s.id } })).toBe(1)
    // Two jobs for one session (a duplicate left by a crash): one message per number, no gap.
    await db.run.update({ where: { id: run.id }, data: { status: 'running' } })
    await Promise.all([handleStep({ sessionId: s.id, runId: run.id }), handleStep({ sessionId: s.id, runId: run.id })])
    const seqs = (await db.protocolMessage.findMany({ where: { sessionId: s.id }, orderBy: { seq: 'asc' } })).map(
      (m) => m.seq,
    )
    expect(seqs).toEqual(seqs.map((_, i) => i + 1))
  })
}

export function killedWorker(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('a killed worker process: its sessions come back and finish with every message exactly once', async () => {
    const w = await world(fake)
    fake().setScript(fx.script(120))
    const run = await create(w, id, fx.setup(w, await fx.dataset(w, 4)))
    const worker = (): ChildProcess =>
      spawn(process.execPath, fx.worker ?? [path.resolve('bin/parley.mjs'), 'worker', '--concurrency', '3'], {
        env: { ...process.env },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    let first: ChildProcess | undefined
    let second: ChildProcess | undefined
    try {
      await execute(startRun, w.researcher, { runId: run.id })
      first = worker()
      const before = await waitFor(
        'the first worker to write messages',
        () => messageCount(run.id),
        (n) => n >= 3,
      )
      first.kill('SIGKILL')
      await new Promise((r) => first?.once('exit', r))
      expect(await runStatus(run.id)).toBe('running')
      second = worker()
      await waitFor(
        'done after the restart',
        () => runStatus(run.id),
        (s) => s === 'done',
        90_000,
      )
      await expectIntact(run.id)
      expect(await messageCount(run.id)).toBeGreaterThan(before)
    } finally {
      first?.kill('SIGKILL')
      second?.kill('SIGTERM')
      if (second && second.exitCode === null) await new Promise((r) => second?.once('exit', r))
    }
  }, 150_000)
}

export function stallThenRetry(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('an LLM failure stalls the session with the error and blocks the run; Retry resumes it to the end', async () => {
    const w = await world(fake)
    fake().setScript(fx.failing())
    const run = await create(w, id, fx.setup(w, await fx.dataset(w, 2)))
    const workers = await startWorkers(2)
    try {
      await execute(startRun, w.researcher, { runId: run.id })
      const stalled = await waitFor(
        'stalled sessions',
        () => db.protocolSession.findMany({ where: { runId: run.id, status: 'stalled' } }),
        (s) => s.length === 2,
      )
      expect(stalled[0]?.stallError).toMatch(/500|server/i)
      const before = await execute(getRun, w.researcher, { runId: run.id })
      expect(before).toMatchObject({ ok: true, data: { run: { status: 'running' }, blocked: { kind: 'stalled' } } })
      // A stalled session on the queue waits for a Retry: a stray job does not call the model again.
      const calls = fake().requests.length
      await handleStep({ sessionId: stalled[0]?.id as string, runId: run.id })
      expect(fake().requests.length).toBe(calls)
      fake().setScript(fx.script())
      expect(await execute(retrySession, w.researcher, { sessionId: stalled[0]?.id })).toMatchObject({ ok: true })
      expect(await execute(retryStalled, w.researcher, { runId: run.id })).toMatchObject({
        ok: true,
        data: { retried: 1 },
      })
      await waitFor(
        'done',
        () => runStatus(run.id),
        (s) => s === 'done',
      )
      await expectIntact(run.id)
      expect(await execute(retrySession, w.researcher, { sessionId: stalled[0]?.id })).toMatchObject({ status: 409 })
      const retried = await db.protocolSession.findUniqueOrThrow({ where: { id: stalled[0]?.id as string } })
      expect(retried.retryCount).toBe(1)
    } finally {
      await workers.stop()
    }
  })
}

export function personTurn(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it("a person's turn: the wrong message is a 409, the right one is appended and audited once, the run goes on", async () => {
    const w = await world(fake)
    fake().setScript(fx.script(10))
    const run = await create(w, id, fx.humanSetup(w, await fx.dataset(w, 1)))
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: run.id } })
    const workers = await startWorkers(1)
    try {
      await execute(startRun, w.researcher, { runId: run.id })
      await waitFor(
        'the expert’s turn',
        () => db.protocolSession.findUniqueOrThrow({ where: { id: s.id } }),
        (x) => x.status === 'awaiting',
      )
      const view = await execute(getSession, w.expert, { sessionId: s.id })
      if (!view.ok) throw new Error(view.error)
      expect(view.data.yourTurn).toBe(true)
      const ask = view.data.ask as { j: number; kind: string | null }
      const turn = fx.humanTurn(view.data)
      // Not theirs: another expert of the study sees nothing.
      const stranger = await makeUser('expert')
      expect(await execute(submitTurn, stranger, { sessionId: s.id, seq: ask.j, ...turn })).toMatchObject({
        status: 404,
      })
      // The wrong message number: a conflict, nothing stored.
      expect(await execute(submitTurn, w.expert, { sessionId: s.id, seq: ask.j + 2, ...turn })).toMatchObject({
        status: 409,
      })
      const before = await db.protocolMessage.count({ where: { sessionId: s.id } })
      // Two tabs send the same turn at once: one message, one audit row.
      const results = await Promise.all([
        execute(submitTurn, w.expert, { sessionId: s.id, seq: ask.j, ...turn }),
        execute(submitTurn, w.expert, { sessionId: s.id, seq: ask.j, ...turn }),
      ])
      expect(results.map((r) => (r.ok ? 200 : r.status)).sort()).toEqual([200, 409])
      const stored = await db.protocolMessage.findUniqueOrThrow({
        where: { sessionId_seq: { sessionId: s.id, seq: ask.j } },
      })
      expect(stored.authorUserId).toBe(w.expert.userId)
      // (up to the person's message: a worker may already have appended the next one, which the person's
      // turn set off with priority)
      expect(await db.protocolMessage.count({ where: { sessionId: s.id, seq: { lte: ask.j } } })).toBe(before + 1)
      const audits = await db.auditLog.findMany({ where: { resourceId: s.id, action: 'session.turn' } })
      expect(audits).toHaveLength(1)
      expect(audits[0]?.actorUserId).toBe(w.expert.userId)
      // The other seats continue on the queue, or the person's turn was the last (a labelling session's
      // one label): then the session is done with exactly that message.
      const after = await waitFor(
        'the session to move on',
        async () => ({
          n: await db.protocolMessage.count({ where: { sessionId: s.id } }),
          status: (await db.protocolSession.findUniqueOrThrow({ where: { id: s.id } })).status,
        }),
        (x) => x.n > before + 1 || x.status === 'done',
      )
      if (after.n === before + 1) expect(after.status).toBe('done')
    } finally {
      await workers.stop()
    }
  })
}

export function awaitingInSameWrite(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('the step that hands the turn to a person marks the session awaiting in the same write', async () => {
    const w = await world(fake)
    fake().setScript(fx.script(0))
    const run = await create(w, id, fx.humanSetup(w, await fx.dataset(w, 1)))
    const s = await db.protocolSession.findFirstOrThrow({ where: { runId: run.id } })
    await db.run.update({ where: { id: run.id }, data: { status: 'running' } })
    // Step by step, no worker: after every step the session's status (what the work queue lists)
    // agrees with the turn its messages give the expert (what the session page shows).
    let yourTurn = false
    for (let i = 0; i < 30 && !yourTurn; i++) {
      const r = await stepSession(s.id)
      const view = await execute(getSession, w.expert, { sessionId: s.id })
      if (!view.ok) throw new Error(view.error)
      yourTurn = view.data.yourTurn
      const row = await db.protocolSession.findUniqueOrThrow({ where: { id: s.id } })
      const queue = await execute(myQueue, w.expert, {})
      if (!queue.ok) throw new Error(queue.error)
      if (yourTurn) {
        expect(row).toMatchObject({ status: 'awaiting', awaitingSeat: (view.data.ask as { seat: string }).seat })
        expect(queue.data).toMatchObject({ counts: { yours: 1 }, next: s.id })
      } else {
        expect(r.kind).toBe('appended')
        expect(row.status).toBe('queued')
        expect(queue.data.counts.yours).toBe(0)
      }
    }
    expect(yourTurn).toBe(true)
  })
}

export function cancelDropsQueue(id: string, fx: ContractFixture, fake: () => FakeLlmServer): void {
  it('cancel drops the queued steps and marks the open sessions cancelled', async () => {
    const w = await world(fake)
    fake().setScript(fx.script())
    const run = await create(w, id, fx.setup(w, await fx.dataset(w, 3)))
    await execute(startRun, w.researcher, { runId: run.id })
    const queued = async () =>
      Number(
        (
          await sql().query<{ n: string }>(
            `SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry') AND data->>'runId' = $2`,
            [STEP_QUEUE, run.id],
          )
        ).rows[0]?.n,
      )
    expect(await queued()).toBe(3)
    expect(await execute(cancelRun, w.researcher, { runId: run.id })).toMatchObject({
      ok: true,
      data: { droppedJobs: 3 },
    })
    expect(await queued()).toBe(0)
    expect(await runStatus(run.id)).toBe('cancelled')
    expect(await db.protocolSession.count({ where: { runId: run.id, status: 'cancelled' } })).toBe(3)
  })
}
