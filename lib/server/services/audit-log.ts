import { z } from 'zod'
import { db } from '@/lib/server/db'
import { defineOperation } from '@/lib/server/operation'
import { pageInput, pageOf, skipTake } from '@/lib/server/pagination'

export const listAudit = defineOperation({
  name: 'audit.list',
  scope: 'audit:read',
  input: z.object({
    ...pageInput,
    action: z.string().trim().max(100).optional(),
    actor: z.string().trim().max(254).optional(),
    resourceType: z.string().trim().max(50).optional(),
    resourceId: z.string().trim().max(100).optional(),
  }),
  async run(_actor, { page, pageSize, action, actor, resourceType, resourceId }) {
    const where = {
      ...(action ? { action: { startsWith: action } } : {}),
      ...(actor ? { actorEmail: { contains: actor, mode: 'insensitive' as const } } : {}),
      ...(resourceType ? { resourceType } : {}),
      ...(resourceId ? { resourceId } : {}),
    }
    const [items, total] = await Promise.all([
      db.auditLog.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(page, pageSize) }),
      db.auditLog.count({ where }),
    ])
    return pageOf(items, total, page, pageSize)
  },
})
