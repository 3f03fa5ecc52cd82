/**
 * What a short-lived process (a CLI command, `npm run db:seed`, a bench) must let go of before Node can
 * exit by itself: the job queue (pg-boss keeps timers and a pool), the offline demo model's HTTP server,
 * the live LISTEN connection, the heartbeat of a process that worked a queue (its timer would otherwise
 * beat, and log, after a bench dropped its database) and both database pools. Each is stopped only when this process started
 * it (they live on `globalThis`), so a command that never touched the database loads none of them.
 * Safe to call more than once.
 */
export async function releaseProcessResources(): Promise<void> {
  const g = globalThis as {
    parleyDemoServer?: unknown
    parleyBoss?: unknown
    parleyLive?: unknown
    parleyDb?: unknown
    parleyPool?: unknown
    parleyProcess?: { timer?: unknown }
  }
  if (g.parleyDemoServer) {
    const { stopDemoEndpoint } = await import('@/lib/server/llm/runtime')
    await stopDemoEndpoint().catch(() => {})
  }
  if (g.parleyBoss) {
    const { stopBoss } = await import('@/lib/server/jobs/queue')
    await stopBoss().catch(() => {})
  }
  if (g.parleyProcess?.timer) {
    const { stopHeartbeat } = await import('@/lib/server/processes')
    await stopHeartbeat().catch(() => {})
  }
  if (g.parleyLive) {
    const { closeLive } = await import('@/lib/server/live')
    await closeLive().catch(() => {})
  }
  if (g.parleyDb || g.parleyPool) {
    const { db } = await import('@/lib/server/db')
    await db.$disconnect().catch(() => {})
  }
}
