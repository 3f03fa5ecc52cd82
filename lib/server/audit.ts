import { randomUUID } from 'node:crypto'
import type pg from 'pg'
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

/** The same row through a plain `pg` client, for a transaction that runs there (e.g. storing an upload). */
export async function writeAuditSql(client: pg.ClientBase, entry: AuditEntry): Promise<void> {
  const json = (v: unknown) => {
    const c = clean(v)
    return c === undefined ? null : JSON.stringify(c)
  }
  await client.query(
    `INSERT INTO "AuditLog" (id, "actorUserId", "actorEmail", via, action, "resourceType", "resourceId", "studyId", before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb)`,
    [
      randomUUID(),
      entry.actor.userId,
      entry.actor.email,
      entry.actor.via,
      entry.action,
      entry.resourceType,
      entry.resourceId,
      entry.studyId ?? null,
      json(entry.before),
      json(entry.after),
    ],
  )
}

export function actorRef(actor: { userId: string; email: string; via: string }) {
  return { userId: actor.userId || null, email: actor.email || null, via: actor.via }
}
