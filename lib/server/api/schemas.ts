import { z } from 'zod'
import { PROTOCOLS } from '@/lib/server/services/studies'
import { ROLES } from '@/lib/server/auth/roles'
import { STUDY_PERMISSIONS } from '@/lib/server/auth/study-roles'

/** Response shapes of the REST API. Dates travel as ISO strings. */
export const ErrorBody = z
  .object({
    error: z.string().meta({ description: 'What went wrong, in words a person can act on.' }),
    fieldErrors: z.record(z.string(), z.array(z.string())).optional(),
  })
  .meta({ id: 'Error' })

const isoDate = z.string().meta({ format: 'date-time' })

export const StudySummary = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    protocol: z.enum(PROTOCOLS).nullable(),
    createdAt: isoDate,
    updatedAt: isoDate,
    archivedAt: isoDate.nullable(),
    _count: z.object({ members: z.number().int(), assignments: z.number().int() }),
  })
  .meta({ id: 'StudySummary' })

export const StudyDetail = StudySummary.extend({
  guidelines: z.string(),
  createdBy: z.object({ id: z.string(), name: z.string(), email: z.string() }).nullable(),
  members: z.array(
    z.object({
      role: z.string(),
      addedAt: isoDate,
      user: z.object({ id: z.string(), name: z.string(), email: z.string(), role: z.string() }),
    }),
  ),
  /** What the caller may do in this study: its account scopes AND its study role. */
  access: z.array(z.enum(STUDY_PERMISSIONS)),
}).meta({ id: 'StudyDetail' })

export const pageOfSchema = <T extends z.ZodType>(item: T, id: string) =>
  z
    .object({
      items: z.array(item),
      page: z.number().int(),
      pageSize: z.number().int(),
      total: z.number().int(),
      pageCount: z.number().int(),
    })
    .meta({ id })

export const Work = z
  .object({
    id: z.string(),
    kind: z.string(),
    title: z.string(),
    instructions: z.string(),
    status: z.string(),
    createdAt: isoDate,
    updatedAt: isoDate,
    userId: z.string(),
    study: z.object({ id: z.string(), name: z.string(), guidelines: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), email: z.string() }),
  })
  .meta({ id: 'Work' })

export const Me = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    via: z.string(),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'Me' })

export const AuditEntry = z
  .object({
    id: z.string(),
    createdAt: isoDate,
    actorUserId: z.string().nullable(),
    actorEmail: z.string().nullable(),
    via: z.string(),
    action: z.string(),
    resourceType: z.string(),
    resourceId: z.string(),
    studyId: z.string().nullable(),
    before: z.unknown(),
    after: z.unknown(),
  })
  .meta({ id: 'AuditEntry' })

export const Health = z
  .object({ status: z.enum(['ok', 'error']), database: z.enum(['ok', 'unreachable']), version: z.string() })
  .meta({ id: 'Health' })
