import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { execTools, ProgramExit } from '@/lib/server/engine/exec'
import { startWorkers } from '@/lib/server/engine/jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { runSession, stepSession } from '@/lib/server/engine/runner'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { cancelRun, createRun, pauseRun, resumeRun, retrySession, startRun } from '@/lib/server/services/runs'
import { inspectSession } from '@/lib/server/services/sessions'
import { makeSession, makeStudy, makeUser } from '../support/fixtures'
import { fakeConnection, useFakeLlm } from '../support/llm'
import { toyPlugin } from './toy/plugin'
import { toyExecPlugin } from './toy-exec/plugin'
import { waitFor as pollUntil } from '../support/processes'

/**
 * The agent runtime (issue 23 part 3) on a toy whose program seat runs a real child process with a
 * side effect through `ctx.exec`: the side effect is recorded once; a cancel or a pause stops the step
 * mid-execution (the child is killed); a seat's time limit stalls the session with a clear error and
 * Retry completes it; a worker SIGKILLed between the program's end and the append comes back without a
 * second record or a second side effect; `onSessionEnd` is called once per end; the LLM client gets the
 * step's signal.
 */
const fake = useFakeLlm()
// A killed worker's job comes back quickly (a real deployment uses minutes); steps here stay below it.
process.env.PARLEY_JOB_EXPIRE_SECONDS = '6'
process.env.PARLEY_JOB_MAINTENANCE_SECONDS = '1'

registerPlugin(toyExecPlugin)
registerPlugin(toyPlugin)

const root = mkdtempSync(path.join(os.tmpdir(), 'parley-runtime-'))
const ENDED = path.join(root, 'ended')
process.env.TOY_EXEC_ENDED = ENDED

afterAll(async () => {
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
  rmSync(root, { recursive: true, force: true })
})

/** Polls twice as often as the default: the program's side effects are short. */
const waitFor = <T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000) =>
  pollUntil(what, fn, ok, ms, 50)

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [])
/** The `start`/`end` lines the program wrote for a session (each start is one execution's side effect). */
const effects = (dir: string, sessionId: string, kind: 'start' | 'end') =>
  lines(path.join(dir, 'effects')).filter((l) => l.startsWith(`${kind} ${sessionId} `))
const ends = (sessionId: string) => lines(ENDED).filter((l) => l.endsWith(` ${sessionId}`))
/** The session's end hook calls once `n` are there (the hook runs just after the commit that ends it), and a beat more. */
async function endsOf(sessionId: string, n: number) {
  await waitFor(
    'the end hook',
    async () => ends(sessionId),
    (e) => e.length >= n,
  )
  await new Promise((r) => setTimeout(r, 300))
  return ends(sessionId)
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function world() {
  const researcher = await makeUser('researcher')
  const study = await makeStudy(researcher, [])
  return { researcher, studyId: study.id }
}

type World = Awaited<ReturnType<typeof world>>

/** A run of the toy with one session in its own folder; returns the run, its session and the folder. */
async function toyRun(w: World, opts: { sleepMs?: number; afterMs?: number; steps?: number; timeoutSeconds?: number }) {
  const dir = mkdtempSync(path.join(root, 'run-'))
  const ds = await db.dataset.create({
    data: {
      studyId: w.studyId,
      name: 'exec',
      kind: 'generic',
      source: 'inline',
      instances: { create: [{ index: 0, input: { label: 'one' }, prediction: '', explanation: '' }] },
    },
  })
  const r = await execute(createRun, w.researcher, {
    studyId: w.studyId,
    protocol: 'toy-exec',
    name: 'runtime',
    datasetId: ds.id,
    seats: {
      runner: {
        kind: 'program',
        program: 'tick',
        params: { dir, sleepMs: opts.sleepMs ?? 20, afterMs: opts.afterMs ?? 0 },
        ...(opts.timeoutSeconds !== undefined ? { timeoutSeconds: opts.timeoutSeconds } : {}),
      },
    },
    config: { steps: opts.steps ?? 3 },
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  const session = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id } })
  return { runId: r.data.id, sessionId: session.id, dir }
}

const runsOf = (sessionId: string) =>
  db.programRun.findMany({ where: { sessionId }, orderBy: [{ seq: 'asc' }, { callIndex: 'asc' }] })
const session = (id: string) => db.protocolSession.findUniqueOrThrow({ where: { id } })

describe('ctx.exec', () => {
  it('records each execution once; a step run again reuses it, and one interrupted mid-way runs again in its row', async () => {
    const w = await world()
    const { sessionId, dir } = await toyRun(w, { steps: 3 })
    expect(await runSession(sessionId)).toMatchObject({ kind: 'done' })
    expect(effects(dir, sessionId, 'start')).toHaveLength(3)
    const runs = await runsOf(sessionId)
    expect(runs.map((r) => [r.seq, r.program, r.callIndex, r.exitStatus, r.limitsHit, r.attempts])).toEqual([
      [1, 'effect', 0, 0, null, 1],
      [2, 'effect', 0, 0, null, 1],
      [3, 'effect', 0, 0, null, 1],
    ])
    expect(runs[0]?.input).toMatchObject({ session: sessionId, j: 1 })
    expect(runs[0]?.output).toMatchObject({ j: 1 })
    expect(runs.every((r) => typeof r.durationMs === 'number' && !r.interrupted)).toBe(true)
    expect(await endsOf(sessionId, 1)).toEqual([`done ${sessionId}`])

    // The inspector shows them beside the LLM calls.
    const inspected = await execute(inspectSession, w.researcher, { sessionId })
    if (!inspected.ok) throw new Error(inspected.error)
    expect(inspected.data.programRuns.map((r) => r.seq)).toEqual([1, 2, 3])

    // The step of message 3 runs again (as after a worker died past the program): the result is reused.
    const rewind = async () => {
      await db.protocolMessage.deleteMany({ where: { sessionId, seq: 3 } })
      await db.contextSnapshot.deleteMany({ where: { sessionId, seq: 3 } })
      await db.protocolSession.update({ where: { id: sessionId }, data: { status: 'queued', stopReason: null } })
    }
    await rewind()
    expect(await stepSession(sessionId)).toMatchObject({ kind: 'appended', seq: 3 })
    expect(effects(dir, sessionId, 'start')).toHaveLength(3)
    const m3 = await db.protocolMessage.findFirstOrThrow({ where: { sessionId, seq: 3 } })
    expect(m3.payload).toMatchObject({ reused: true })
    expect(m3.body).toMatchObject({ output: runs[2]?.output })

    // Started and never finished (its worker died mid-program): it runs again, in the same row.
    await rewind()
    await db.programRun.updateMany({ where: { sessionId, seq: 3 }, data: { durationMs: null, output: undefined } })
    expect(await stepSession(sessionId)).toMatchObject({ kind: 'appended', seq: 3 })
    expect(effects(dir, sessionId, 'start')).toHaveLength(4)
    const again = await runsOf(sessionId)
    expect(again).toHaveLength(3)
    expect(again[2]).toMatchObject({ seq: 3, attempts: 2, exitStatus: 0, interrupted: false })
  })

  it("a program's own time limit and exit status are its result (recorded, reused), not a stopped step", async () => {
    const w = await world()
    const { sessionId, dir } = await toyRun(w, { steps: 1 })
    const plugin = {
      ...toyExecPlugin,
      programs: {
        slow: { run: toyExecPlugin.programs?.effect as never, timeoutSeconds: 0.3 },
        failing: async () => {
          throw new ProgramExit(3, { stderr: 'no' }, 'memory')
        },
        // PostgreSQL refuses U+0000 in jsonb and text: recorded escaped, as model output is.
        nul: async () => ({ out: 'a\u0000b' }),
      },
    }
    const exec = execTools({ plugin, sessionId, seq: 1, signal: new AbortController().signal })
    const slow = await exec('slow', { dir, session: sessionId, j: 1, sleepMs: 5000 })
    expect(slow).toMatchObject({ exitStatus: null, limitsHit: 'timeout', reused: false })
    const failing = await exec('failing', { x: 1 })
    expect(failing).toMatchObject({ exitStatus: 3, limitsHit: 'memory', output: { stderr: 'no' }, reused: false })
    // The child was killed at its time limit.
    const pid = Number(effects(dir, sessionId, 'start')[0]?.split(' ')[3])
    await waitFor(
      'the child killed',
      async () => alive(pid),
      (a) => !a,
      5000,
    )
    // The same step again: both are reused, nothing runs.
    const again = execTools({ plugin, sessionId, seq: 1, signal: new AbortController().signal })
    expect(await again('slow', { dir, session: sessionId, j: 1, sleepMs: 5000 })).toMatchObject({
      limitsHit: 'timeout',
      reused: true,
    })
    expect(await again('failing', { x: 1 })).toMatchObject({ exitStatus: 3, reused: true })
    expect(effects(dir, sessionId, 'start')).toHaveLength(1)
    // Another input (the step's model answered differently this time) runs again, in the same row.
    const third = execTools({ plugin, sessionId, seq: 1, signal: new AbortController().signal })
    expect(await third('failing', { x: 2 })).toMatchObject({ exitStatus: 3, reused: false })
    expect(await third('nul', {})).toMatchObject({ exitStatus: 0, output: { out: 'a\u0000b' } })
    const rows = (await runsOf(sessionId)).sort((a, b) => a.program.localeCompare(b.program))
    expect(rows.map((r) => [r.program, r.attempts, r.interrupted])).toEqual([
      ['failing', 2, false],
      ['nul', 1, false],
      ['slow', 1, false],
    ])
    expect(rows[1]?.output).toEqual({ out: 'a\\u0000b' })
  })
})

describe('ctx.signal', () => {
  it('a cancel stops the step mid-execution: the child is killed, nothing is appended, the run records cancelled', async () => {
    const w = await world()
    const { runId, sessionId, dir } = await toyRun(w, { sleepMs: 8000, steps: 2 })
    const workers = await startWorkers(1)
    try {
      await execute(startRun, w.researcher, { runId })
      await waitFor(
        'the program running',
        async () => effects(dir, sessionId, 'start').length,
        (n) => n === 1,
      )
      const pid = Number(effects(dir, sessionId, 'start')[0]?.split(' ')[3])
      expect(alive(pid)).toBe(true)
      const t0 = Date.now()
      expect(await execute(cancelRun, w.researcher, { runId })).toMatchObject({ ok: true })
      const [row] = await waitFor(
        'the execution recorded as cancelled',
        () => runsOf(sessionId),
        (r) => r[0]?.durationMs !== null && r[0]?.durationMs !== undefined,
      )
      expect(Date.now() - t0).toBeLessThan(3000)
      expect(row).toMatchObject({ seq: 1, limitsHit: 'cancelled', interrupted: true, exitStatus: null, output: null })
      await waitFor(
        'the child killed',
        async () => alive(pid),
        (a) => !a,
        5000,
      )
      expect(effects(dir, sessionId, 'end')).toEqual([])
      expect((await session(sessionId)).status).toBe('cancelled')
      expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(0)
      expect(await endsOf(sessionId, 1)).toEqual([`cancelled ${sessionId}`])
    } finally {
      await workers.stop()
    }
  })

  it('a pause stops the step mid-execution and leaves the session queued; resume runs the program again in its row', async () => {
    const w = await world()
    const { runId, sessionId, dir } = await toyRun(w, { sleepMs: 8000, steps: 2 })
    const workers = await startWorkers(1)
    try {
      await execute(startRun, w.researcher, { runId })
      await waitFor(
        'the program running',
        async () => effects(dir, sessionId, 'start').length,
        (n) => n === 1,
      )
      expect(await execute(pauseRun, w.researcher, { runId })).toMatchObject({ ok: true })
      const [row] = await waitFor(
        'the execution recorded as paused',
        () => runsOf(sessionId),
        (r) => r[0]?.durationMs !== null && r[0]?.durationMs !== undefined,
      )
      expect(row).toMatchObject({ limitsHit: 'paused', interrupted: true })
      expect((await session(sessionId)).status).toBe('queued')
      expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(0)
      writeFileSync(path.join(dir, 'sleep-ms'), '20')
      expect(await execute(resumeRun, w.researcher, { runId })).toMatchObject({ ok: true })
      await waitFor(
        'done',
        async () => (await session(sessionId)).status,
        (s) => s === 'done',
      )
      const runs = await runsOf(sessionId)
      expect(runs.map((r) => [r.seq, r.attempts, r.limitsHit, r.exitStatus])).toEqual([
        [1, 2, null, 0],
        [2, 1, null, 0],
      ])
      expect(await endsOf(sessionId, 1)).toEqual([`done ${sessionId}`])
    } finally {
      await workers.stop()
    }
  })

  it("a seat's time limit stalls the session with a clear error; Retry completes it", async () => {
    const w = await world()
    const { runId, sessionId, dir } = await toyRun(w, { sleepMs: 5000, steps: 2, timeoutSeconds: 1 })
    const workers = await startWorkers(1)
    try {
      await execute(startRun, w.researcher, { runId })
      const stalled = await waitFor(
        'stalled',
        () => session(sessionId),
        (s) => s.status === 'stalled',
      )
      expect(stalled.stallError).toBe('timeout: The Runner seat took longer than 1 s.')
      const [row] = await runsOf(sessionId)
      expect(row).toMatchObject({ seq: 1, limitsHit: 'timeout', interrupted: true })
      const pid = Number(effects(dir, sessionId, 'start')[0]?.split(' ')[3])
      await waitFor(
        'the child killed',
        async () => alive(pid),
        (a) => !a,
        5000,
      )
      expect(await endsOf(sessionId, 1)).toEqual([`stalled ${sessionId}`])
      writeFileSync(path.join(dir, 'sleep-ms'), '20')
      expect(await execute(retrySession, w.researcher, { sessionId })).toMatchObject({ ok: true })
      await waitFor(
        'done',
        async () => (await session(sessionId)).status,
        (s) => s === 'done',
      )
      expect((await runsOf(sessionId)).map((r) => [r.seq, r.attempts, r.exitStatus])).toEqual([
        [1, 2, 0],
        [2, 1, 0],
      ])
      expect(await endsOf(sessionId, 2)).toEqual([`stalled ${sessionId}`, `done ${sessionId}`])
    } finally {
      await workers.stop()
    }
  })

  it("the plugin's default time limit for a program seat applies when the seat sets none", async () => {
    const w = await world()
    const { sessionId, dir } = await toyRun(w, { sleepMs: 3000, steps: 1 })
    toyExecPlugin.timeouts = { program: { tick: 1 } }
    try {
      expect(await stepSession(sessionId)).toMatchObject({
        kind: 'stalled',
        error: 'timeout: The Runner seat took longer than 1 s.',
      })
    } finally {
      toyExecPlugin.timeouts = undefined
    }
    expect(effects(dir, sessionId, 'end')).toEqual([])
  })

  it('a time limit the job expiry would outlive, or one that is not a whole positive number, is refused', async () => {
    const w = await world()
    await expect(toyRun(w, { timeoutSeconds: 6 })).rejects.toThrow(/below the job expiry/)
    await expect(toyRun(w, { timeoutSeconds: 0 })).rejects.toThrow(/at least 1 second/)
  })

  it("the step's signal reaches the LLM client: a model call past the seat's time limit is aborted", async () => {
    const w = await world()
    const conn = await fakeConnection(w.studyId, fake())
    fake().setScript([{ match: { model: 'gen' }, replies: [{ text: '50', latencyMs: 10_000 }] }])
    const s = await makeSession(w.studyId, {
      protocol: 'toy',
      config: { maxGuesses: 2 },
      task: 'numbers',
      instance: { target: 7 },
      seats: {
        guesser: { kind: 'llm', model: { connectionId: conn.id, model: 'gen' }, timeoutSeconds: 1 },
        oracle: { kind: 'program', program: 'compare' },
      },
    })
    const t0 = Date.now()
    expect(await stepSession(s.id)).toMatchObject({
      kind: 'stalled',
      error: 'timeout: The Guesser seat took longer than 1 s.',
    })
    expect(Date.now() - t0).toBeLessThan(4000)
    // The HTTP request was aborted (its attempt is logged as such), not left to finish in 10 s.
    const calls = await waitFor(
      'the aborted call logged',
      () => db.llmCall.findMany({ where: { sessionRef: s.id } }),
      (c) => c.length > 0,
      3000,
    )
    expect(calls.map((c) => c.errorKind)).toEqual(['aborted'])
    expect(Date.now() - t0).toBeLessThan(5000)
  })
})

describe('a worker SIGKILLed mid-step', () => {
  it('comes back without a second record or a second side effect of a finished execution', async () => {
    const w = await world()
    const { runId, sessionId, dir } = await toyRun(w, { afterMs: 1500, steps: 3 })
    const worker = (): ChildProcess =>
      spawn(process.execPath, ['--import', 'tsx', 'tests/engine/toy-exec/worker.ts', '2'], {
        env: { ...process.env },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    let first: ChildProcess | undefined
    let second: ChildProcess | undefined
    try {
      await execute(startRun, w.researcher, { runId })
      first = worker()
      // The program of message 1 has finished and is recorded; its message is not written yet.
      await waitFor(
        'the first execution recorded',
        () => runsOf(sessionId),
        (r) => r[0]?.exitStatus === 0,
      )
      expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(0)
      first.kill('SIGKILL')
      await new Promise((r) => first?.once('exit', r))
      expect(await db.protocolMessage.count({ where: { sessionId } })).toBe(0)
      second = worker()
      await waitFor(
        'done after the restart',
        async () => (await session(sessionId)).status,
        (s) => s === 'done',
        60_000,
      )
      const runs = await runsOf(sessionId)
      expect(runs.map((r) => [r.seq, r.attempts, r.exitStatus])).toEqual([
        [1, 1, 0],
        [2, 1, 0],
        [3, 1, 0],
      ])
      expect(effects(dir, sessionId, 'start').map((l) => l.split(' ')[2])).toEqual(['1', '2', '3'])
      const messages = await db.protocolMessage.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } })
      expect(messages.map((m) => m.seq)).toEqual([1, 2, 3])
      expect(messages[0]?.payload).toMatchObject({ reused: true })
      expect(await endsOf(sessionId, 1)).toEqual([`done ${sessionId}`])
    } finally {
      first?.kill('SIGKILL')
      second?.kill('SIGTERM')
      if (second && second.exitCode === null) await new Promise((r) => second?.once('exit', r))
    }
  }, 90_000)
})

describe('the inspector', () => {
  it('names each program run by its outcome, like an LLM call', async () => {
    const { createElement } = await import('react')
    const { renderToStaticMarkup } = await import('react-dom/server')
    const { ProgramRunView, programOutcome } = await import('@/components/sessions/prompt-view')
    const base = {
      id: 'r',
      seq: 1,
      program: 'effect',
      callIndex: 0,
      input: { code: 'print(1)' },
      output: null,
      exitStatus: 0,
      limitsHit: null,
      error: null,
      interrupted: false,
      attempts: 1,
      durationMs: 12,
    }
    expect(programOutcome(base)).toEqual({ label: 'exit 0', failed: false })
    expect(programOutcome({ ...base, exitStatus: 3 })).toEqual({ label: 'exit 3', failed: true })
    expect(programOutcome({ ...base, exitStatus: null, limitsHit: 'timeout' }).label).toBe('stopped: timeout')
    expect(programOutcome({ ...base, exitStatus: null, limitsHit: 'paused', interrupted: true }).label).toBe(
      'stopped: paused (runs again with the step)',
    )
    expect(programOutcome({ ...base, durationMs: null }).label).toMatch(/no result/)
    const html = renderToStaticMarkup(createElement(ProgramRunView, { run: { ...base, attempts: 2 } }))
    expect(html).toContain('program effect')
    expect(html).toContain('12 ms')
    expect(html).toContain('started 2×')
  })
})
