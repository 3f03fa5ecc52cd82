import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { db, sql } from '@/lib/server/db'
import { queue, stopBoss } from '@/lib/server/jobs/queue'

afterAll(async () => {
  await stopBoss()
  await db.$disconnect()
})

describe('creating job queues', () => {
  it('many concurrent first uses of new queues create each once, without a deadlock', async () => {
    // The demo seed plays runs side by side; each first enqueue of a process used to call
    // createQueue concurrently for the same name, which PostgreSQL answered with "deadlock detected".
    const names = Array.from({ length: 6 }, () => `test-${randomUUID().slice(0, 8)}`)
    await Promise.all(names.flatMap((name) => Array.from({ length: 12 }, () => queue(name))))
    const { rows } = await sql().query<{ name: string }>('SELECT name FROM pgboss.queue WHERE name = ANY($1)', [names])
    expect(rows.map((r) => r.name).sort()).toEqual([...names].sort())
  })
})
