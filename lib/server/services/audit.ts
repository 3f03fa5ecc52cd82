import type { Prisma } from '@/lib/generated/prisma/client'
import type { Db, Tx } from '@/lib/server/db'

export interface AuditEntry {
  actor: { userId: string | null; email: string | null; via: string }
  action: string
  resourceType: string
  resourceId: string
  studyId?: string | null
  before?: unknown
  after?: unknown
}

/** Drop secrets and make values JSON-safe before they are stored in the audit log. */
function clean(value: unknown): Prisma.InputJsonValue | undefined {
  if (value === undefined || value === null) return undefined
  return JSON.parse(
    JSON.stringify(value, (key, v) => (/(password|secret|hash|token)/i.test(key) ? '[redacted]' : v)),
  ) as Prisma.InputJsonValue
}

/** Write one audit row. Call it with the transaction client so the row commits with the mutation. */
export async function writeAudit(client: Db | Tx, entry: AuditEntry): Promise<void> {
  await client.auditLog.create({
    data: {
      actorUserId: entry.actor.userId,
      actorEmail: entry.actor.email,
      via: entry.actor.via,
      action: entry.action,
      resourceType: entry.resourceType,
      resourceId: entry.resourceId,
      studyId: entry.studyId ?? null,
      before: clean(entry.before),
      after: clean(entry.after),
    },
  })
}

export function actorRef(actor: { userId: string; email: string; via: string }) {
  return { userId: actor.userId || null, email: actor.email || null, via: actor.via }
}
