export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return
  // First, before anything slow: record each request's socket address for the sign-in limits
  // (route handlers and server actions cannot see the socket).
  const { installPeerCapture } = await import('@/lib/server/auth/client-address')
  installPeerCapture()
  if (!process.env.DATABASE_URL) return
  const { ensureAdminFromEnv } = await import('@/lib/server/bootstrap')
  const { ensureDemoConnection } = await import('@/lib/server/llm/runtime')
  try {
    await ensureAdminFromEnv()
    // The offline demo model is always available as a global connection, clearly labelled.
    await ensureDemoConnection()
  } catch (err) {
    const code = (err as { code?: string }).code
    // P2021: the tables do not exist yet (the server started before `npm run db:migrate`).
    if (code === 'P2021') console.warn('[parley] the database is not migrated yet: run `npm run db:migrate`.')
    else console.error('[parley] start-up tasks failed:', err)
  }
  try {
    // Extra headers stored before they were encrypted are sealed now (SQL migrations cannot encrypt).
    const { sealLegacyHeaders } = await import('@/lib/server/llm/header-secrets')
    const sealed = await sealLegacyHeaders()
    if (sealed) console.log(`[parley] encrypted the extra headers of ${sealed} connection(s)`)
  } catch (err) {
    // 42P01: the tables do not exist yet (reported above); the next start seals them.
    if ((err as { code?: string }).code !== '42P01')
      console.error('[parley] encrypting stored extra headers failed:', err)
  }
  // This server also works the job queues (the sessions of every protocol, imports, session creation)
  // unless told not to (run `parley worker` elsewhere). It does not depend on the start-up tasks
  // above: pg-boss keeps its own schema.
  if (process.env.PARLEY_WORKERS !== '0') {
    try {
      const { startWorkers } = await import('@/lib/server/engine/jobs')
      const { startBulkWorkers } = await import('@/lib/server/jobs/bulk')
      await startWorkers()
      // Dataset imports and session creation: one job of each at a time per process.
      await startBulkWorkers()
    } catch (err) {
      console.error('[parley] the job workers did not start:', err)
    }
  }
}
