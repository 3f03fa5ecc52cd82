import { createHash, randomBytes } from 'node:crypto'
import { z } from 'zod'
import { db } from '@/lib/server/db'
import { notFound } from '@/lib/server/errors'
import { defineOperation } from '@/lib/server/operation'
import { actorRef, writeAudit } from '@/lib/server/audit'
import { id } from '@/lib/server/services/studies'

/**
 * API keys look like `pk_<8 hex prefix>_<43 char secret>`. The prefix is stored to tell keys apart;
 * only the sha256 of the whole key is stored (a random 256-bit secret needs no slow hash). A key
 * acts with its owner's current role, so demoting a user narrows their keys at once.
 */
export const API_KEY_PATTERN = /^pk_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

export function generateApiKey(): { key: string; prefix: string } {
  const prefix = randomBytes(4).toString('hex')
  return { key: `pk_${prefix}_${randomBytes(32).toString('base64url')}`, prefix }
}

const keySelect = {
  id: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const

export const listMyApiKeys = defineOperation({
  name: 'apikeys.list',
  scope: 'apikeys:own',
  input: z.object({}),
  async run(actor) {
    return db.apiKey.findMany({ where: { userId: actor.userId }, select: keySelect, orderBy: { createdAt: 'desc' } })
  },
})

export const createApiKey = defineOperation({
  name: 'apikeys.create',
  scope: 'apikeys:own',
  input: z.object({
    name: z.string().trim().min(1, 'Name the key (e.g. "analysis notebook").').max(100),
    expiresInDays: z.coerce.number().int().min(1).max(3650).optional(),
  }),
  async run(actor, input) {
    const { key, prefix } = generateApiKey()
    const expiresAt = input.expiresInDays ? new Date(Date.now() + input.expiresInDays * 86_400_000) : null
    const created = await db.$transaction(async (tx) => {
      const row = await tx.apiKey.create({
        data: { userId: actor.userId, name: input.name, prefix, hash: hashApiKey(key), expiresAt },
        select: keySelect,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'apikey.create',
        resourceType: 'apikey',
        resourceId: row.id,
        after: { name: row.name, prefix: row.prefix, expiresAt },
      })
      return row
    })
    // The only time the full key leaves the server.
    return { ...created, key }
  },
})

export const revokeApiKey = defineOperation({
  name: 'apikeys.revoke',
  scope: 'apikeys:own',
  input: z.object({ keyId: id }),
  async run(actor, { keyId }) {
    return db.$transaction(async (tx) => {
      const row = await tx.apiKey.findFirst({ where: { id: keyId, userId: actor.userId } })
      if (!row) throw notFound('API key')
      const after = await tx.apiKey.update({
        where: { id: keyId },
        data: { revokedAt: row.revokedAt ?? new Date() },
        select: keySelect,
      })
      await writeAudit(tx, {
        actor: actorRef(actor),
        action: 'apikey.revoke',
        resourceType: 'apikey',
        resourceId: keyId,
        after: { prefix: row.prefix },
      })
      return after
    })
  },
})
