import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Actor } from '@/lib/server/actor'
import { takePartStudyRoles } from '@/lib/server/auth/study-roles'
import { db, sql } from '@/lib/server/db'
import { stopBoss } from '@/lib/server/jobs/queue'
import { execute } from '@/lib/server/operation'
import { createRun } from '@/lib/server/services/runs'
import { claimSeat, myQueue, queueBaseSql, submitTurn } from '@/lib/server/services/sessions'
import { labellingDataset } from '@/protocols/labelling/fixture'
import { makeStudy, makeUser } from '../../../tests/support/fixtures'

/**
 * My work over a large claimable labelling run with distinct claimants (bench:labelling's annotators
 * found it took 4.6 s per call over 3,000 slots, 43 s over 9,000): for every seat it offers, the queue
 * asks whether the person took another session of the same item, and counts the item's finished
 * sessions. Those lookups go by the ("runId", "instanceId") index, never a scan of the run per seat,
 * and the counts stay exact.
 */
let researcher: Actor
let a: Actor
let b: Actor
let studyId: string
let runId: string
const ITEMS = 330 // × 3 slots: 990 sessions, written by runs.create at once
beforeAll(async () => {
  researcher = await makeUser('researcher')
  a = await makeUser('expert')
  b = await makeUser('expert')
  studyId = (await makeStudy(researcher, [a, b])).id
  const datasetId = await labellingDataset(studyId, ITEMS, `queue scale ${Math.random()}`)
  const r = await execute(createRun, researcher, {
    studyId,
    protocol: 'labelling',
    name: 'queue scale',
    datasetId,
    config: { preset: 'relevance-0-2' },
    seats: { annotator: { kind: 'human', claimable: true } },
    repetitions: 3,
    distinctClaimants: true,
    fillFirst: 3,
    start: true,
  })
  if (!r.ok) throw new Error(`${r.error} ${JSON.stringify(r.fieldErrors ?? {})}`)
  runId = r.data.id
  await db.$executeRawUnsafe('ANALYZE "ProtocolSession"')
  await db.$executeRawUnsafe('ANALYZE "SessionSeat"')
}, 120_000)
afterAll(async () => {
  await stopBoss()
})

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Loops': number
  Plans?: PlanNode[]
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

describe('My work over a claimable run of 330 items × 3 slots with distinct claimants', () => {
  it('offers every free slot but those of the item the person labelled, with exact counts', async () => {
    const first = await db.protocolSession.findFirstOrThrow({
      where: { runId, position: 0, repetition: 1 },
      select: { id: true },
    })
    expect((await execute(claimSeat, a, { sessionId: first.id, seat: 'annotator' })).ok).toBe(true)
    const sent = await execute(submitTurn, a, { sessionId: first.id, seq: 1, answers: { O: '1' } })
    expect(sent.ok, JSON.stringify(sent)).toBe(true)
    const mine = await execute(myQueue, a, { filter: 'claimable', page: 1, pageSize: 10 })
    const theirs = await execute(myQueue, b, { filter: 'claimable', page: 1, pageSize: 10 })
    if (!mine.ok || !theirs.ok) throw new Error('the queue refused')
    // a: item 0's other two slots are never offered to them (and their own is done).
    expect(mine.data.counts.claimable).toBe(3 * ITEMS - 3)
    expect(mine.data.counts.done).toBe(1)
    // b: every slot but the one a finished; item 0 first (fillFirst: nearest to its 3 labels).
    expect(theirs.data.counts.claimable).toBe(3 * ITEMS - 1)
    expect(theirs.data.items[0]?.position).toBe(0)
  })

  it("looks up an item's sessions by index, never by scanning the run once per offered seat", async () => {
    const { rows } = await sql().query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) SELECT grp, count(*)::int AS n FROM (${queueBaseSql()}) q GROUP BY grp`,
      [b.userId, takePartStudyRoles(b.role)],
    )
    const top = rows[0]?.['QUERY PLAN'][0]
    if (!top) throw new Error('EXPLAIN gave no plan')
    const plan = nodes(top.Plan)
    const repeatedScans = plan.filter(
      (n) => n['Relation Name'] === 'ProtocolSession' && n['Node Type'] === 'Seq Scan' && n['Actual Loops'] > 1,
    )
    expect(repeatedScans).toEqual([])
    expect(plan.some((n) => n['Index Name'] === 'ProtocolSession_runId_instanceId_idx')).toBe(true)
  })
})
