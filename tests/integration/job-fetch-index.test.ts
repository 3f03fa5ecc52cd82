import { afterAll, describe, expect, it } from 'vitest'
import { sql } from '@/lib/server/db'
import { FETCH_INDEX, queue, stopBoss } from '@/lib/server/jobs/queue'

afterAll(async () => {
  await stopBoss()
})

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  Plans?: PlanNode[]
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

/** pg-boss 10's fetch of a queue's next jobs, as its plans.js writes it (the part that picks them). */
const FETCH = `SELECT id FROM pgboss.job
  WHERE name = $1 AND state < 'active' AND start_after < now()
  ORDER BY priority DESC, created_on, id LIMIT 1 FOR UPDATE SKIP LOCKED`

describe('the job queue fetches in index order (lib/server/jobs/queue.ts, FETCH_INDEX)', () => {
  it('a queue created after start has the index; its fetch stops at the first job instead of sorting 3,000', async () => {
    const name = `fetch-order-${Date.now().toString(36)}`
    const b = await queue(name)
    expect((await sql().query(`SELECT to_regclass('pgboss.${FETCH_INDEX}') AS i`)).rows[0]?.i).toBeTruthy()
    await b.insert(Array.from({ length: 3000 }, (_, i) => ({ name, data: { i }, priority: i === 1234 ? 5 : 0 })))
    await sql().query('ANALYZE pgboss.job')
    const { rows } = await sql().query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${FETCH}`, [
      name,
    ])
    const plan = nodes(rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode)
    expect(plan.filter((n) => n['Node Type'] === 'Sort')).toEqual([])
    expect(plan.some((n) => n['Node Type'] === 'Index Scan')).toBe(true)
    // The order is pg-boss's: the higher priority first (then the oldest; one insert shares its time).
    const first = await b.fetch<{ i: number }>(name)
    expect(first?.[0]?.data.i).toBe(1234)
  })
})
