/**
 * The CLI and scripts use DATABASE_URL when set; otherwise the embedded PostgreSQL (started for the
 * duration of the command, or reused when `npm start` already runs it).
 */
export async function ensureDatabaseUrl<T>(fn: () => Promise<T>): Promise<T> {
  try {
    process.loadEnvFile()
  } catch {}
  if (process.env.DATABASE_URL) return fn()
  const { startEmbedded } = await import('../../scripts/embedded-db.mjs')
  const embedded = await startEmbedded({ log: (m: string) => console.error(m) })
  process.env.DATABASE_URL = embedded.url
  try {
    return await fn()
  } finally {
    const { db } = await import('@/lib/server/db')
    await db.$disconnect()
    await embedded.stop()
  }
}
