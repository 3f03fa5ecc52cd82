export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || !process.env.DATABASE_URL) return
  const { ensureAdminFromEnv } = await import('@/lib/server/bootstrap')
  const { ensureDemoConnection } = await import('@/lib/server/llm/runtime')
  try {
    await ensureAdminFromEnv()
    // The offline demo model is always available as a global connection, clearly labelled.
    await ensureDemoConnection()
  } catch (err) {
    console.error('[parley] could not create the first admin from the environment:', err)
  }
}
