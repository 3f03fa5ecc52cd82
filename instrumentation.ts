export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return
  // Before the first render: a completed render's abort reason must not keep the renders after it
  // (lib/server/abort-reasons.ts).
  const { formatAbortReasons } = await import('@/lib/server/abort-reasons')
  formatAbortReasons()
  // The configuration first: a bad value refuses to start, naming the variable.
  const { ConfigError, config } = await import('@/lib/server/config')
  try {
    config()
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`${err.message}\nParley did not start.\n`)
    // EX_CONFIG: scripts/serve.mjs stops instead of starting another process that would refuse too.
    process.exit(78)
  }
  process.env.PARLEY_PROCESS ??= 'web'
  // The composition root of the web processes: the protocol plugins are bound here (loaded on first use).
  await import('@/lib/server/protocols/bind')
  const { log } = await import('@/lib/server/log')
  // Before anything slow: record each request's socket address for the sign-in limits (route
  // handlers and server actions cannot see the socket), and give each request an id for the logs.
  const { installPeerCapture } = await import('@/lib/server/auth/client-address')
  installPeerCapture()
  const { installRequestIds } = await import('@/lib/server/request-log')
  installRequestIds()
  const { afterDrain, installShutdown, onShutdown } = await import('@/lib/server/processes')
  // SIGTERM: readiness 503 at once, workers hand their sessions back; PARLEY_DRAIN_SECONDS later
  // (so a load balancer saw the 503) live streams close and next start stops taking connections.
  installShutdown({ graceMs: 3000, drainMs: config().drainSeconds * 1000 })
  const { closeLive } = await import('@/lib/server/live')
  onShutdown('live streams', async () => {
    await afterDrain()
    await closeLive()
  })
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
    if (code === 'P2021') log().warn('the database is not migrated yet: run `npm run db:migrate`')
    else log().error({ err }, 'start-up tasks failed')
  }
  try {
    // Extra headers stored before they were encrypted are sealed now (SQL migrations cannot encrypt).
    const { sealLegacyHeaders } = await import('@/lib/server/llm/header-secrets')
    const sealed = await sealLegacyHeaders()
    if (sealed) log().info({ connections: sealed }, 'encrypted the stored extra headers')
  } catch (err) {
    // 42P01: the tables do not exist yet (reported above); the next start seals them.
    if ((err as { code?: string }).code !== '42P01') log().error({ err }, 'encrypting stored extra headers failed')
  }
  const { installMetrics } = await import('@/lib/server/metrics')
  installMetrics()
  // This server also works the job queues (the sessions of every protocol, imports, session creation)
  // unless told not to (run `parley worker` elsewhere). It does not depend on the start-up tasks
  // above: pg-boss keeps its own schema.
  if (config().workers > 0) {
    try {
      const { startWorkers } = await import('@/lib/server/engine/jobs')
      const { startBulkWorkers } = await import('@/lib/server/jobs/bulk')
      const { startHeartbeat } = await import('@/lib/server/processes')
      const workers = await startWorkers()
      // Dataset imports and session creation: one job of each at a time per process.
      const bulk = await startBulkWorkers()
      onShutdown('job workers', async () => {
        await Promise.all([workers.stop(), bulk.stop()])
      })
      await startHeartbeat('web')
      log().info({ workers: config().workers }, 'job workers started')
    } catch (err) {
      log().error({ err }, 'the job workers did not start')
    }
  }
}
