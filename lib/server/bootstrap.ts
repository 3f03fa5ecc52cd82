import { z } from 'zod'
import { db } from '@/lib/server/db'
import { writeAudit } from '@/lib/server/audit'
import { email, insertUser, password, personName } from '@/lib/server/services/users'
import { log } from '@/lib/server/log'

export const FirstAdminInput = z.object({ email, name: personName.default('Admin'), password })

/**
 * Creates the first admin if (and only if) the database has no admin yet. Serialised with an
 * advisory lock so two app instances starting together create one admin, not two.
 */
export async function createFirstAdmin(input: z.infer<typeof FirstAdminInput>, via: string) {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(4242001)`
    if ((await tx.user.count({ where: { role: 'admin' } })) > 0) return null
    const user = await insertUser(tx, { ...input, role: 'admin' })
    await writeAudit(tx, {
      actor: { userId: null, email: null, via },
      action: 'user.create-first-admin',
      resourceType: 'user',
      resourceId: user.id,
      after: user,
    })
    return user
  })
}

/** At start-up: PARLEY_ADMIN_EMAIL / PARLEY_ADMIN_PASSWORD (/ PARLEY_ADMIN_NAME) create the first admin. */
export async function ensureAdminFromEnv(): Promise<void> {
  const { PARLEY_ADMIN_EMAIL, PARLEY_ADMIN_PASSWORD, PARLEY_ADMIN_NAME } = process.env
  if (!PARLEY_ADMIN_EMAIL || !PARLEY_ADMIN_PASSWORD) return
  const parsed = FirstAdminInput.safeParse({
    email: PARLEY_ADMIN_EMAIL,
    password: PARLEY_ADMIN_PASSWORD,
    name: PARLEY_ADMIN_NAME || undefined,
  })
  if (!parsed.success) {
    log().error({ problems: parsed.error.issues.map((i) => i.message) }, 'PARLEY_ADMIN_* is invalid')
    return
  }
  const created = await createFirstAdmin(parsed.data, 'system:env')
  if (created) log().info({ email: created.email }, 'created the first admin from PARLEY_ADMIN_EMAIL')
}

export async function needsSetup(): Promise<boolean> {
  return (await db.user.count({ where: { role: 'admin' } })) === 0
}
