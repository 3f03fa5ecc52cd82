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
    actorName: z.string().nullable().meta({ description: "The actor's current name" }),
    studyName: z.string().nullable(),
    resourceName: z.string().nullable().meta({ description: "The resource's current name, where it has one" }),
  })
  .meta({ id: 'AuditEntry' })

export const Health = z
  .object({ status: z.enum(['ok', 'error']), database: z.enum(['ok', 'unreachable']), version: z.string() })
  .meta({ id: 'Health' })

export const Readiness = z
  .object({
    status: z.enum(['ready', 'draining', 'error']),
    database: z.enum(['ok', 'unreachable']).optional(),
    version: z.string(),
  })
  .meta({ id: 'Readiness' })

// ---------------------------------------------------------------------------------------------
// Runs and sessions of every protocol (the protocol's own parts travel as `view` / `data`)
// ---------------------------------------------------------------------------------------------

export const RunSummary = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    protocol: z.string(),
    protocolLabel: z.string(),
    task: z.string(),
    status: z.string().meta({ description: 'draft | running | paused | done | cancelled' }),
    repetitions: z.number().int(),
    createdAt: isoDate,
    study: z.object({ id: z.string(), name: z.string() }),
    sessions: z.number().int(),
    done: z.number().int(),
    stalled: z.number().int(),
    awaiting: z.number().int(),
    blocked: z
      .enum(['stalled', 'people'])
      .nullable()
      .meta({ description: 'What keeps a running run from moving on its own' }),
  })
  .meta({ id: 'RunSummary' })

export const RunCreated = z
  .object({
    id: z.string(),
    sessions: z.number().int(),
    protocol: z.string(),
    started: z.boolean(),
    firstSessionId: z.string().nullable(),
  })
  .meta({ id: 'RunCreated' })

const counts = z.object({
  total: z.number().int(),
  queued: z.number().int(),
  waiting: z.number().int(),
  running: z.number().int(),
  awaiting: z.number().int(),
  stalled: z.number().int(),
  done: z.number().int(),
  cancelled: z.number().int(),
  calls: z.number().int(),
  failedCalls: z.number().int(),
  tokensIn: z.number().int(),
  tokensOut: z.number().int(),
  costUsd: z.number(),
})

export const RunDetail = z
  .looseObject({
    run: z.looseObject({ id: z.string(), name: z.string(), protocol: z.string(), status: z.string() }),
    counts,
    blocked: z.object({ kind: z.string(), message: z.string() }).nullable(),
    exports: z.array(z.object({ table: z.string(), label: z.string() })),
    files: z.array(z.object({ file: z.string(), label: z.string() })),
    sessions: pageOfSchema(
      z.looseObject({
        id: z.string(),
        repetition: z.number().int(),
        position: z.number().int(),
        status: z.string(),
        awaitingSeat: z.string().nullable(),
        stopReason: z.string().nullable(),
        stallError: z.string().nullable(),
        messages: z.number().int(),
      }),
      'RunSessionPage',
    ),
  })
  .meta({ id: 'RunDetail' })

export const RunMove = z.looseObject({ runId: z.string() }).meta({ id: 'RunMove' })

export const ProtocolData = z
  .looseObject({ protocol: z.string(), data: z.unknown() })
  .meta({ id: 'ProtocolData', description: "The protocol's own part (its plugin's view): results, a dashboard." })

export const SessionDetail = z
  .looseObject({
    id: z.string(),
    protocol: z.string(),
    status: z.string().meta({ description: 'queued | waiting | running | awaiting | stalled | done | cancelled' }),
    awaitingSeat: z.string().nullable(),
    stopReason: z.string().nullable(),
    seats: z.array(z.looseObject({ name: z.string(), label: z.string(), kind: z.string().nullable() })),
    messages: z.array(z.looseObject({ seq: z.number().int(), body: z.unknown() })),
    ask: z.looseObject({ seat: z.string(), j: z.number().int(), kind: z.string().nullable() }).nullable(),
    done: z.string().nullable(),
    mySeats: z.array(z.string()),
    yourTurn: z.boolean(),
    view: z.unknown().meta({ description: "The protocol's view of the session (its plugin's `views.session`)." }),
  })
  .meta({ id: 'SessionDetail' })

export const TurnResult = z
  .looseObject({ sessionId: z.string(), seq: z.number().int(), done: z.string().nullable(), message: z.unknown() })
  .meta({ id: 'TurnResult' })

export const Queue = z
  .looseObject({
    counts: z.object({
      yours: z.number().int(),
      claimable: z.number().int(),
      others: z.number().int(),
      waiting: z.number().int(),
      stalled: z.number().int(),
      done: z.number().int(),
    }),
    next: z.string().nullable(),
    items: z.array(z.looseObject({ id: z.string(), protocol: z.string(), status: z.string(), seat: z.string() })),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
    pageCount: z.number().int(),
  })
  .meta({ id: 'WorkQueue' })

export const DatasetImportStarted = z
  .object({ id: z.string(), name: z.string(), status: z.literal('importing') })
  .meta({ id: 'DatasetImportStarted' })

export const DatasetImportStatus = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    /** importing | ready (a failed import answers 400 with its reason). */
    status: z.string(),
    rowsDone: z.number().int(),
    rowsTotal: z.number().int().nullable(),
    error: z.string().nullable(),
    instances: z.number().int(),
    assets: z.number().int(),
  })
  .meta({ id: 'DatasetImportStatus' })
