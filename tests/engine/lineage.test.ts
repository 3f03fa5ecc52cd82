import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { replay } from '@/lib/protocols/types'
import { db, sql } from '@/lib/server/db'
import { AppError } from '@/lib/server/errors'
import { runHeadless } from '@/lib/server/engine/headless'
import { startWorkers } from '@/lib/server/engine/jobs'
import { registerPlugin } from '@/lib/server/engine/plugins'
import { afterSessionDone, closeIfFinished, loadSession, prepare, runSession } from '@/lib/server/engine/runner'
import { createRunSessions } from '@/lib/server/engine/schedule'
import { STEP_QUEUE } from '@/lib/server/engine/step-queue'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { cancelRun, createRun, getRun, pauseRun, resumeRun, startRun } from '@/lib/server/services/runs'
import type { Actor } from '@/lib/server/actor'
import { makeStudy, makeUser } from '../support/fixtures'
import { schedulerCalls, treePlugin } from './toy-fork/plugin'
import { pathOf, tree } from './toy-fork/protocol'

/**
 * Session lineage and run scheduling, on a toy that touches nothing outside its folder: a tree walk
 * whose scheduler forks finished walks at the turns they did not take until every leaf is reached.
 */
registerPlugin(treePlugin)

let researcher: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  studyId = (await makeStudy(researcher)).id
})
beforeEach(() => {
  Object.assign(schedulerCalls, { total: 0, inside: 0, overlapped: 0, delayMs: 0 })
})
afterAll(async () => {
  await sql().query(`DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')`, [STEP_QUEUE])
  await stopBoss()
})

async function treeRun(depth: number, start = false) {
  const ds = await db.dataset.create({
    data: {
      studyId,
      name: `tree ${depth}`,
      kind: 'generic',
      source: 'inline',
      instances: { create: [{ index: 0, input: { depth }, prediction: '', explanation: '' }] },
    },
  })
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'tree',
    name: `tree ${depth}`,
    seats: {},
    datasetId: ds.id,
    ...(start ? { start: true } : {}),
  })
  if (!r.ok) throw new Error(r.error)
  return r.data.id as string
}

const sessionsOf = (runId: string) =>
  db.protocolSession.findMany({
    where: { runId: runId },
    orderBy: { createdAt: 'asc' },
    include: { messages: { orderBy: { seq: 'asc' } }, contexts: { orderBy: { seq: 'asc' } } },
  })

const leaves = (depth: number) =>
  Array.from({ length: 2 ** depth }, (_, i) =>
    i.toString(2).padStart(depth, '0').replace(/0/g, 'L').replace(/1/g, 'R'),
  ).sort()

const runOf = async (runId: string) => {
  const r = await execute(getRun, researcher, { runId })
  if (!r.ok) throw new Error(r.error)
  return r.data.run
}

describe('a scheduler that forks sessions until a coverage goal is met', () => {
  it('reaches every leaf once, each fork starting from its parent’s prefix, and the scheduler closes the run', async () => {
    const runId = await treeRun(3)
    const before = await sessionsOf(runId)
    expect(before.map((s) => s.key)).toEqual(['1:0'])
    await runHeadless(runId, { concurrency: 2 })

    const all = await sessionsOf(runId)
    expect(all.every((s) => s.status === 'done')).toBe(true)
    // Every leaf exactly once: 8 walks, 1 from the plan, 7 forks.
    expect(all.map((s) => pathOf(s.messages.map((m) => m.body))).sort()).toEqual(leaves(3))
    expect(all.filter((s) => s.parentId).length).toBe(7)
    expect(schedulerCalls.total).toBe(8)
    const byId = new Map(all.map((s) => [s.id, s]))
    for (const fork of all.filter((s) => s.parentId)) {
      const parent = byId.get(fork.parentId as string)
      if (!parent || fork.forkSeq === null) throw new Error('a fork without its parent or fork point')
      // The fork's key is its branch: the parent's first forkSeq turns, then right.
      const path = pathOf(fork.messages.map((m) => m.body))
      expect(path.slice(0, fork.forkSeq + 1)).toBe(fork.key)
      const prefix = (rows: typeof fork.messages) =>
        rows
          .filter((m) => m.seq <= (fork.forkSeq as number))
          .map(({ seq, sender, receiver, body, label, value, detail, payload, llmCallId, authorUserId }) => ({
            seq,
            sender,
            receiver,
            body,
            label,
            value,
            detail,
            payload,
            llmCallId,
            authorUserId,
          }))
      expect(prefix(fork.messages)).toEqual(prefix(parent.messages))
      expect(fork.messages.filter((m) => m.seq <= (fork.forkSeq as number)).length).toBe(fork.forkSeq)
      const ctx = (rows: typeof fork.contexts) =>
        rows.filter((c) => c.seq <= (fork.forkSeq as number)).map((c) => ({ seq: c.seq, context: c.context }))
      expect(ctx(fork.contexts)).toEqual(ctx(parent.contexts))
      // Its own steps came after the prefix (its own messages differ from the parent's at forkSeq + 1).
      expect(path[fork.forkSeq]).toBe('R')
      expect(pathOf(parent.messages.map((m) => m.body))[fork.forkSeq]).toBe('L')
    }

    const run = await runOf(runId)
    expect(run.status).toBe('done')
    expect(run.schedule).toMatchObject({ done: true, progress: { done: 8, total: 8 } })
  })

  it('a fork replays exactly as its parent up to the fork point, through the one loader every reader uses', async () => {
    const runId = await treeRun(4)
    await runHeadless(runId)
    const all = await sessionsOf(runId)
    const fork = all.find((s) => s.parentId && (s.forkSeq ?? 0) >= 2)
    if (!fork) throw new Error('no deep fork')
    const parent = all.find((s) => s.id === fork.parentId)
    if (!parent) throw new Error('no parent')
    const loaded = await prepare(await loadSession(fork.id))
    const parentLoaded = await prepare(await loadSession(parent.id))
    const cut = fork.forkSeq as number
    const head = (messages: unknown[]) =>
      replay(tree, {}, { depth: 4 }, messages.slice(0, cut) as Parameters<typeof tree.apply>[1][])
    expect(head(loaded.session.messages)).toEqual(head(parentLoaded.session.messages))
    expect(loaded.ctx.state.messages.length).toBe(4)
    expect(loaded.session).toMatchObject({ key: fork.key, parentId: parent.id, forkSeq: cut })
  })
})

describe('keys', () => {
  it('are unique per run: a duplicate is refused with a 409 and nothing is written; another run may reuse it', async () => {
    const runId = await treeRun(2)
    const root = (await sessionsOf(runId))[0]
    if (!root) throw new Error('no root')
    await runSession(root.id)
    const before = await sessionsOf(runId)
    const messages = await db.protocolMessage.count({ where: { session: { runId: runId } } })
    // A batch whose second session repeats a key: the first of the batch is not kept either.
    const err = await createRunSessions(runId, [
      { key: 'fresh', parentId: root.id, forkSeq: 1 },
      { key: 'R', parentId: root.id, forkSeq: 0 },
    ]).catch((e) => e)
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).status).toBe(409)
    expect(await sessionsOf(runId)).toHaveLength(before.length)
    expect(await db.protocolMessage.count({ where: { session: { runId: runId } } })).toBe(messages)

    // The plan's key of the root, likewise.
    await expect(createRunSessions(runId, [{ key: '1:0', parentId: root.id, forkSeq: 0 }])).rejects.toMatchObject({
      status: 409,
    })
    // A fork point past the parent's log is refused too.
    await expect(createRunSessions(runId, [{ key: 'far', parentId: root.id, forkSeq: 3 }])).rejects.toMatchObject({
      status: 400,
    })

    const other = await treeRun(2)
    const otherRoot = (await sessionsOf(other))[0]
    if (!otherRoot) throw new Error('no root')
    await runSession(otherRoot.id)
    // Its root and its scheduler's forks, "R" among them: the key is taken in the first run only.
    expect((await sessionsOf(other)).map((s) => s.key).sort()).toEqual(['1:0', 'LR', 'R'])
  })
})

describe('a fork asked for by an operation', () => {
  it('reopens a done run when asked (it closes again after the fork), writes its audit row with it; without reopen a done run stays done', async () => {
    const runId = await treeRun(1, true)
    const root = (await sessionsOf(runId))[0]
    if (!root) throw new Error('no root')
    await runSession(root.id)
    for (const s of await sessionsOf(runId)) if (s.status !== 'done') await runSession(s.id)
    expect((await runOf(runId)).status).toBe('done')

    const kept = await createRunSessions(runId, [{ key: 'kept', parentId: root.id, forkSeq: 0 }])
    expect((await runOf(runId)).status).toBe('done')
    await db.protocolSession.update({ where: { id: kept[0] as string }, data: { status: 'cancelled' } })

    const [fork] = await createRunSessions(runId, [{ key: 'again', parentId: root.id, forkSeq: 1 }], {
      reopen: true,
      audit: (ids) => ({
        actor: { userId: researcher.userId, email: null, via: 'cli' },
        action: 'session.fork',
        resourceType: 'session',
        resourceId: ids[0] as string,
        studyId,
      }),
    })
    if (!fork) throw new Error('no fork')
    expect((await runOf(runId)).status).toBe('running')
    expect(await db.auditLog.count({ where: { action: 'session.fork', resourceId: fork } })).toBe(1)
    await runSession(fork)
    const forked = await db.protocolSession.findUniqueOrThrow({ where: { id: fork } })
    expect(forked.status).toBe('done')
    expect((await runOf(runId)).status).toBe('done')
  })
})

describe('the scheduler decides when the run is done', () => {
  it('a run with nothing open stays running while the scheduler has not reached its goal', async () => {
    const runId = await treeRun(2, true)
    const root = (await sessionsOf(runId))[0]
    if (!root) throw new Error('no root')
    await runSession(root.id)
    // LL done; the scheduler forked R and LR and says 1 of 4 leaves.
    expect((await runOf(runId)).schedule).toMatchObject({ done: false, progress: { done: 1, total: 4 } })
    await db.protocolSession.updateMany({
      where: { runId: runId, status: { not: 'done' } },
      data: { status: 'cancelled' },
    })
    await closeIfFinished(runId)
    expect((await runOf(runId)).status).toBe('running')
  })

  it('without a schedule the run closes when nothing is open, as before', async () => {
    // The tree toy's scheduler, taken away for this run: the grid alone.
    const { schedule } = treePlugin
    treePlugin.schedule = undefined
    try {
      const runId = await treeRun(2, true)
      await runHeadless(runId)
      const run = await runOf(runId)
      expect(run.status).toBe('done')
      expect(run.schedule).toBeNull()
      expect(await sessionsOf(runId)).toHaveLength(1)
    } finally {
      treePlugin.schedule = schedule
    }
  })
})

describe('a scheduler that does not watch a run', () => {
  it('is not called for its sessions (watches says so from the run’s config) and the run closes when nothing is open', async () => {
    const { schedule } = treePlugin
    const seen: unknown[] = []
    treePlugin.schedule = {
      ...schedule,
      watches: (config) => {
        seen.push(config)
        return false
      },
    }
    try {
      const runId = await treeRun(2, true)
      await runHeadless(runId)
      const run = await runOf(runId)
      expect(run.status).toBe('done')
      // The grid alone: no fork was made, the scheduler never ran, the session was never marked.
      expect(schedulerCalls.total).toBe(0)
      expect(await sessionsOf(runId)).toHaveLength(1)
      expect((await db.protocolSession.findFirstOrThrow({ where: { runId } })).scheduledAt).toBeNull()
      // It was asked with the run's config, split as a session's is.
      expect(seen.length).toBeGreaterThan(0)
      expect(seen[0]).toEqual({ config: {}, extras: undefined })
    } finally {
      treePlugin.schedule = schedule
    }
    // Watching again (the default), the same run forks to every leaf.
    const runId = await treeRun(2, true)
    await runHeadless(runId)
    expect(await sessionsOf(runId)).toHaveLength(4)
    expect(schedulerCalls.total).toBe(4)
  })
})

describe('the scheduler at the start of a run', () => {
  it('adds its sessions once when the run starts (an instance of the run’s dataset), not again on resume', async () => {
    const { schedule } = treePlugin
    let calls = 0
    treePlugin.schedule = {
      ...schedule,
      async onRunStart(ctx) {
        calls++
        const root = (await ctx.sessions())[0]
        if (!root?.instanceId) throw new Error('no root')
        return { create: [{ key: 'second root', instanceId: root.instanceId, position: 1 }], done: false }
      },
    }
    try {
      const runId = await treeRun(2)
      expect(await execute(startRun, researcher, { runId })).toMatchObject({ ok: true })
      const all = await sessionsOf(runId)
      expect(all.map((s) => [s.key, s.parentId, s.instanceId, s.position, s.status])).toEqual([
        ['1:0', null, all[0]?.instanceId, 0, 'queued'],
        ['second root', null, all[0]?.instanceId, 1, 'queued'],
      ])
      expect(all[1]?.instance).toEqual({ depth: 2 })
      expect((await runOf(runId)).schedule).toMatchObject({ started: true, done: false })
      expect(await execute(pauseRun, researcher, { runId })).toMatchObject({ ok: true })
      expect(await execute(resumeRun, researcher, { runId })).toMatchObject({ ok: true })
      expect(calls).toBe(1)
      expect(await sessionsOf(runId)).toHaveLength(2)
      await execute(cancelRun, researcher, { runId })
    } finally {
      treePlugin.schedule = schedule
    }
  })
})

describe('the scheduler runs under the run’s lock', () => {
  it('once per session end, one at a time, even when sessions end at once or an end is reported twice', async () => {
    const runId = await treeRun(3)
    await db.run.update({ where: { id: runId }, data: { status: 'running' } })
    const root = (await sessionsOf(runId))[0]
    if (!root) throw new Error('no root')
    await runSession(root.id)
    expect(schedulerCalls.total).toBe(1)
    const forks = (await sessionsOf(runId)).filter((s) => s.status === 'queued')
    expect(forks.map((s) => s.key).sort()).toEqual(['LLR', 'LR', 'R'])
    // The three forks end at the same time; the scheduler takes its time inside.
    schedulerCalls.delayMs = 150
    await Promise.all(forks.map((f) => runSession(f.id)))
    expect(schedulerCalls.total).toBe(4)
    expect(schedulerCalls.overlapped).toBe(0)
    // Reported again (a job run twice, a finish after the append): not scheduled again.
    await Promise.all(forks.map((f) => afterSessionDone(f.id)))
    expect(schedulerCalls.total).toBe(4)
    // Each saw what the others created: no branch was forked twice (keys are unique anyway).
    const keys = (await sessionsOf(runId)).map((s) => s.key)
    expect(new Set(keys).size).toBe(keys.length)
    expect((await runOf(runId)).schedule).toMatchObject({ progress: { done: 4, total: 8 } })
    schedulerCalls.delayMs = 0
    await runHeadless(runId)
    expect(schedulerCalls.total).toBe(8)
    expect((await runOf(runId)).status).toBe('done')
  })

  it('on the job queue: workers step the forks it creates until the goal is met', async () => {
    const runId = await treeRun(3)
    const started = await execute(startRun, researcher, { runId })
    expect(started.ok).toBe(true)
    const workers = await startWorkers(3)
    try {
      for (let i = 0; i < 800; i++) {
        if ((await runOf(runId)).status === 'done') break
        await new Promise((r) => setTimeout(r, 25))
      }
    } finally {
      await workers.stop()
    }
    const run = await runOf(runId)
    expect(run.status).toBe('done')
    expect(run.schedule).toMatchObject({ done: true, progress: { done: 8, total: 8 } })
    const all = await sessionsOf(runId)
    expect(all.map((s) => pathOf(s.messages.map((m) => m.body))).sort()).toEqual(leaves(3))
    expect(schedulerCalls.total).toBe(8)
    expect(schedulerCalls.overlapped).toBe(0)
  })
})
