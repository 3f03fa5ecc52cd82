/**
 * A bench's life in one process (tests/integration/release.test.ts runs it): a throwaway database,
 * both pools used, the database dropped, then the line that must be the last.
 */
import { throwawayDatabase } from '../../scripts/bench-support'

const database = await throwawayDatabase({ prefix: 'parley_droptest' })
const { db, sql } = await import('../../lib/server/db')
// Every client of both pools open at once, as a bench's workers leave them.
await Promise.all(
  Array.from({ length: 10 }, () => [
    sql().query('SELECT pg_sleep(0.05)'),
    db.$executeRaw`SELECT pg_sleep(0.05)`,
  ]).flat(),
)
await database.drop()
console.log('{"last":true}')
