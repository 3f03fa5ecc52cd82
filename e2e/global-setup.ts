import { deploy } from '../scripts/migrate.mjs'

/** Migrate the e2e database and load the demo users and study the specs sign in with. */
export default async function globalSetup() {
  if (!process.env.DATABASE_URL) throw new Error('e2e needs DATABASE_URL (npm test provides a fresh database)')
  await deploy([], { quiet: true })
  await import('../lib/server/protocols/bind')
  const { seedDemo } = await import('../lib/server/seed')
  await seedDemo()
  const { db } = await import('../lib/server/db')
  await db.$disconnect()
}
