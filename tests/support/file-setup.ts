import pg from 'pg'
import { beforeAll } from 'vitest'
// Tests call the services in-process: the protocol plugins are bound as a process's entry point binds them.
import '@/lib/server/protocols/bind'

/**
 * Every test file starts with an empty job queue, as it would on a database of its own. The files share
 * one database (vitest.config.ts) and run one after another; a file that ended with steps still queued
 * (sessions whose fake model server is gone with it) handed them to the next file's workers, which then
 * spent their time on them: a worker's /health counted a job that was not its test's, and an expert's
 * turn waited behind a stranger's retries.
 */
beforeAll(() => emptyJobQueue())

/** Delete every job not yet finished (queued, waiting to retry, or taken by a worker now gone). */
export async function emptyJobQueue(): Promise<void> {
  const url = process.env.DATABASE_URL
  if (!url) return
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(`SELECT to_regclass('pgboss.job') IS NOT NULL AS present`)
    if (rows[0]?.present) await client.query(`DELETE FROM pgboss.job WHERE state IN ('created', 'retry', 'active')`)
  } finally {
    await client.end()
  }
}
