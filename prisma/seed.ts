// `npm run db:seed`: the demo study and one user per role (password parley-demo). Idempotent.
// With --if-empty it does nothing on a database that already has users (used by `npm start`).
import { ensureDatabaseUrl } from '@/lib/cli/database'
import { db } from '@/lib/server/db'
import { releaseProcessResources } from '@/lib/server/release'
import { seedDemo } from '@/lib/server/seed'
import '@/lib/server/protocols/bind'

// Seeding plays the demo runs, which starts the job queue and the demo model's HTTP server: both are
// stopped at the end, so the script exits by itself (npm start waits for it before serving).
try {
  await ensureDatabaseUrl(async () => {
    if (process.argv.includes('--if-empty') && (await db.user.count()) > 0) return
    const { created } = await seedDemo()
    console.log(created.length ? `Seeded: ${created.join(', ')}` : 'Demo data already present; nothing changed.')
  })
} finally {
  await releaseProcessResources()
}
