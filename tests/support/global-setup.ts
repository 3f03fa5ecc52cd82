import pg from 'pg'

/**
 * Integration tests run against a real PostgreSQL. `npm test` (scripts/test.mjs) passes a fresh
 * database in DATABASE_URL; run alone, vitest starts the embedded PostgreSQL and makes one.
 */
export default async function setup() {
  process.env.BETTER_AUTH_SECRET ??= 'vitest-secret-vitest-secret-vitest-secret-01'
  let stop: (() => Promise<void>) | undefined
  if (!process.env.DATABASE_URL) {
    const { startEmbedded } = await import('../../scripts/embedded-db.mjs')
    const embedded = await startEmbedded({
      dataDir: '.data/test-pg',
      port: Number(process.env.PARLEY_TEST_PG_PORT ?? 54330),
      database: 'postgres',
    })
    const url = new URL(embedded.url)
    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    await client.query('DROP DATABASE IF EXISTS parley_unit WITH (FORCE)')
    await client.query('CREATE DATABASE parley_unit')
    await client.end()
    url.pathname = '/parley_unit'
    process.env.DATABASE_URL = url.toString()
    stop = embedded.stop
  }
  const { deploy } = await import('../../scripts/migrate.mjs')
  await deploy([], { quiet: true })
  return async () => {
    await stop?.()
  }
}
