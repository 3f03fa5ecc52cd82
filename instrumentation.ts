export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || !process.env.DATABASE_URL) return
  const { ensureAdminFromEnv } = await import('@/lib/server/bootstrap')
  try {
    await ensureAdminFromEnv()
  } catch (err) {
    console.error('[parley] could not create the first admin from the environment:', err)
  }
}
