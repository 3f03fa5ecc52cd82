function loadEnvFile() {
  try {
    process.loadEnvFile()
  } catch {}
}

/**
 * The CLI and scripts use DATABASE_URL when set; otherwise the embedded PostgreSQL (started for the
 * duration of the command, or reused when `npm start` already runs it).
 */
export async function ensureDatabaseUrl<T>(fn: () => Promise<T>): Promise<T> {
  loadEnvFile()
  if (process.env.DATABASE_URL) return fn()
  const { startEmbedded } = await import('../../scripts/embedded-db.mjs')
  const embedded = await startEmbedded({ log: (m: string) => console.error(m) })
  process.env.DATABASE_URL = embedded.url
  try {
    return await fn()
  } finally {
    // Everything that talks to the cluster stops before the cluster does.
    const { releaseProcessResources } = await import('@/lib/server/release')
    await releaseProcessResources()
    await embedded.stop()
  }
}

/**
 * For commands that call models through stored connections (`parley worker`, `parley pxp run`): find
 * the secret that decrypts stored API keys exactly as `npm start` does (the environment, else the
 * data folder's auth-secret; scripts/secret.mjs), or stop at once with a message saying what to set,
 * instead of letting every session stall on keys that cannot be read.
 */
export async function ensureSecret(): Promise<void> {
  loadEnvFile()
  const { requireEncryptionSecret } = await import('../../scripts/secret.mjs')
  requireEncryptionSecret()
}
