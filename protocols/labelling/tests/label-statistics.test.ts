import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { db, sql } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * The labelling pages find their labels by the message's kind (body->>'kind' = 'label'). PostgreSQL
 * estimates that filter from the statistics on the expression (migration message_kind_statistics),
 * not its default guess of 0.5 % of the rows, which over 10,000 × 3 labels planned 30,000 index
 * lookups instead of a hash join (bench:labelling, agreementPage).
 */
let researcher: Actor
let studyId: string
beforeAll(async () => {
  researcher = await makeUser('researcher')
  studyId = (await makeStudy(researcher)).id
})
afterAll(async () => {
  await stopBoss()
})

describe("the estimate of a run's labels", () => {
  it('after ANALYZE, the planner expects about as many label messages as there are', async () => {
    const datasetId = await labellingDataset(studyId, 1, `stats ${Math.random()}`)
    const r = await execute(createRun, researcher, {
      studyId,
      protocol: 'labelling',
      name: 'stats',
      datasetId,
      config: { preset: 'relevance-0-2' },
      seats: { annotator: { kind: 'human', claimable: true } },
      repetitions: 1,
    })
    if (!r.ok) throw new Error(r.error)
    const session = await db.protocolSession.findFirstOrThrow({ where: { runId: r.data.id }, select: { id: true } })
    // 3,000 sessions with their label, as a submitted label leaves them.
    await db.$executeRawUnsafe(
      `INSERT INTO "ProtocolSession" (id, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, repetition, position, status, "updatedAt")
       SELECT 'stat-' || $2 || '-' || i, "studyId", "runId", protocol, "protocolVersion", config, task, instance, seats, 1, i + 1, 'done', now()
       FROM "ProtocolSession", generate_series(1, 3000) i WHERE id = $1`,
      session.id,
      r.data.id,
    )
    await db.$executeRawUnsafe(
      `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, body, label, value, "authorUserId")
       SELECT 'statm-' || $1 || '-' || i, 'stat-' || $1 || '-' || i, 1, 'annotator', 'annotator',
              jsonb_build_object('seq', 1, 'sender', 'annotator', 'kind', 'label', 'schemaVersion', 1,
                                 'answers', jsonb_build_object('O', i % 3)), 'label', 'O=' || (i % 3), $2
       FROM generate_series(1, 3000) i`,
      r.data.id,
      researcher.userId,
    )
    await db.$executeRawUnsafe('ANALYZE "ProtocolMessage"')
    const { rows } = await sql().query<{
      'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number; 'Actual Rows': number } }>
    }>(`EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1 FROM "ProtocolMessage" m WHERE m.body->>'kind' = 'label'`)
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan
    if (!plan) throw new Error('EXPLAIN gave no plan')
    expect(plan['Actual Rows']).toBeGreaterThanOrEqual(3000)
    const ratio = plan['Plan Rows'] / plan['Actual Rows']
    expect(ratio, `planned ${plan['Plan Rows']} rows for ${plan['Actual Rows']}`).toBeGreaterThan(0.5)
    expect(ratio).toBeLessThan(2)
  }, 60_000)
})
