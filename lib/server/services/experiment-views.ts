import { z } from 'zod'
import type { Prisma } from '@/lib/generated/prisma/client'
import { db } from '@/lib/server/db'
import { notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf, skipTake } from '@/lib/server/pagination'
import { id, requireStudyAccess, studiesWhere } from '@/lib/server/services/studies'

/**
 * What researchers read about experiments: the list, one experiment with its sessions and the
 * counts/tokens/cost so far, and the session inspector (D, M and C with the exact request of every
 * LLM call). Reads only; running, pausing and cancelling live in experiment-runs.ts.
 */

export const SESSION_STATUSES = ['running', 'awaiting', 'stalled', 'done'] as const

export const listExperiments = defineOperation({
  name: 'experiments.list',
  scope: 'studies:read',
  input: z.object({ ...pageInput, studyId: id.optional() }),
  async run(actor, { page, pageSize, studyId }) {
    if (studyId) await requireStudyAccess(db, actor, studyId, 'read')
    return experimentPage({ study: studiesWhere(actor, 'read'), ...(studyId ? { studyId } : {}) }, page, pageSize)
  },
})

/** A page of experiments (any protocol) with their session counts, finished ones counted in SQL. */
export async function experimentPage(where: Prisma.ExperimentWhereInput, page: number, pageSize: number) {
  const [items, total] = await Promise.all([
    db.experiment.findMany({
      where,
      orderBy: { createdAt: 'desc' },
      select: {
        id: true,
        name: true,
        protocol: true,
        task: true,
        status: true,
        repetitions: true,
        createdAt: true,
        study: { select: { id: true, name: true } },
        _count: { select: { sessions: true } },
      },
      ...skipTake(page, pageSize),
    }),
    db.experiment.count({ where }),
  ])
  const done = items.length
    ? await db.protocolSession.groupBy({
        by: ['experimentId'],
        where: { experimentId: { in: items.map((e) => e.id) }, status: 'done' },
        _count: { _all: true },
      })
    : []
  const doneBy = new Map(done.map((d) => [d.experimentId, d._count._all]))
  return pageOf(
    items.map((e) => ({ ...e, sessions: e._count.sessions, done: doneBy.get(e.id) ?? 0 })),
    total,
    page,
    pageSize,
  )
}

export interface ExperimentCounts {
  total: number
  running: number
  awaiting: number
  stalled: number
  done: number
  calls: number
  failedCalls: number
  tokensIn: number
  tokensOut: number
  costUsd: number
}

/** Session counts by status and the LLM usage of an experiment, in two SQL aggregates. */
export async function experimentCounts(experimentId: string): Promise<ExperimentCounts> {
  const [byStatus, usage] = await Promise.all([
    db.protocolSession.groupBy({ by: ['status'], where: { experimentId }, _count: { _all: true } }),
    db.$queryRaw<
      Array<{ calls: bigint; failed: bigint; tin: bigint | null; tout: bigint | null; cost: number | null }>
    >`
      SELECT count(*) AS calls, count(*) FILTER (WHERE c.status <> 'ok') AS failed,
             sum(c."tokensIn") AS tin, sum(c."tokensOut") AS tout, sum(c."costUsd") AS cost
      FROM "LlmCall" c
      WHERE c."sessionRef" IN (SELECT s.id FROM "ProtocolSession" s WHERE s."experimentId" = ${experimentId})`,
  ])
  const count = (s: string) => byStatus.find((b) => b.status === s)?._count._all ?? 0
  const u = usage[0]
  return {
    total: byStatus.reduce((a, b) => a + b._count._all, 0),
    running: count('running'),
    awaiting: count('awaiting'),
    stalled: count('stalled'),
    done: count('done'),
    calls: Number(u?.calls ?? 0),
    failedCalls: Number(u?.failed ?? 0),
    tokensIn: Number(u?.tin ?? 0),
    tokensOut: Number(u?.tout ?? 0),
    costUsd: Number(u?.cost ?? 0),
  }
}

export const getExperiment = defineOperation({
  name: 'experiments.get',
  scope: 'studies:read',
  input: z.object({
    experimentId: id,
    ...pageInput,
    status: z.enum(SESSION_STATUSES).optional(),
    repetition: z.coerce.number().int().min(1).max(1000).optional(),
  }),
  async run(actor, { experimentId, page, pageSize, status, repetition }) {
    const experiment = await db.experiment.findUnique({
      where: { id: experimentId },
      include: { study: { select: { id: true, name: true } } },
    })
    if (!experiment) throw notFound('Experiment')
    const { access } = await requireStudyAccess(db, actor, experiment.studyId, 'read')
    const where: Prisma.ProtocolSessionWhereInput = {
      experimentId,
      ...(status ? { status } : {}),
      ...(repetition ? { repetition } : {}),
    }
    const [sessions, total, counts, dataset] = await Promise.all([
      db.protocolSession.findMany({
        where,
        orderBy: [{ repetition: 'asc' }, { position: 'asc' }],
        select: {
          id: true,
          repetition: true,
          position: true,
          status: true,
          stopReason: true,
          stallError: true,
          instanceId: true,
          updatedAt: true,
          assigneeId: true,
          _count: { select: { messages: true } },
        },
        ...skipTake(page, pageSize),
      }),
      db.protocolSession.count({ where }),
      experimentCounts(experimentId),
      db.dataset.findUnique({ where: { id: experiment.datasetId }, select: { id: true, name: true, kind: true } }),
    ])
    const assignees = await db.user.findMany({
      where: { id: { in: [...new Set(sessions.map((s) => s.assigneeId).filter((x): x is string => !!x))] } },
      select: { id: true, email: true },
    })
    const email = new Map(assignees.map((u) => [u.id, u.email]))
    return {
      experiment,
      /** What the actor may do in the experiment's study (read, write, manage). */
      access,
      dataset,
      counts,
      sessions: pageOf(
        sessions.map((s) => ({
          ...s,
          messages: s._count.messages,
          assignee: s.assigneeId ? email.get(s.assigneeId) : null,
        })),
        total,
        page,
        pageSize,
      ),
    }
  },
})

/**
 * The session inspector: D (the session and its instance snapshot), M (every message), C (the
 * context each sender was conditioned on) and every LLM call the session made, with its exact
 * request. Researchers only (`work:read-study`): experts see their own sessions on /sessions.
 */
export const inspectSession = defineOperation({
  name: 'experiments.inspect-session',
  scope: 'work:read-study',
  input: z.object({ sessionId: id }),
  async run(actor, { sessionId }) {
    const s = await db.protocolSession.findUnique({
      where: { id: sessionId },
      include: {
        messages: { orderBy: { seq: 'asc' } },
        contexts: { orderBy: { seq: 'asc' } },
        experiment: { select: { id: true, name: true, carryOver: true } },
        study: { select: { id: true, name: true } },
      },
    })
    if (!s) throw notFound('Session')
    await requireStudyAccess(db, actor, s.studyId, 'read')
    const calls = await db.llmCall.findMany({
      where: { sessionRef: s.id },
      orderBy: { createdAt: 'asc' },
      select: {
        id: true,
        createdAt: true,
        purpose: true,
        messageRef: true,
        modelRequested: true,
        status: true,
        attempt: true,
        error: true,
        request: true,
        response: true,
        tokensIn: true,
        tokensOut: true,
        latencyMs: true,
        costUsd: true,
        cached: true,
      },
    })
    const authors = await db.user.findMany({
      where: { id: { in: s.messages.map((m) => m.authorUserId).filter((x): x is string => !!x) } },
      select: { id: true, email: true },
    })
    const email = new Map(authors.map((u) => [u.id, u.email]))
    return {
      session: s,
      messages: s.messages.map((m) => ({
        ...m,
        author: m.authorUserId ? (email.get(m.authorUserId) ?? 'a removed user') : null,
      })),
      calls,
    }
  },
})
